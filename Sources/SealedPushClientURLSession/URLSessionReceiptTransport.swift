import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SealedPushClient

/// A ``ReceiptTransport`` on `URLSession`: posts each receipt as `application/octet-stream` to the gateway's
/// `POST /v1/apps/{appId}/receipts` (no API key: the receipt's sealing is its credential).
public struct URLSessionReceiptTransport: ReceiptTransport {
    private let url: URL
    private let session: URLSession

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - url: The receipts URL, e.g. `https://push.example.com/v1/apps/chat/receipts`.
    ///   - configuration: The session configuration (default `.ephemeral`: no cookies, no cache).
    public init(url: URL, configuration: URLSessionConfiguration = .ephemeral) {
        self.url = url
        let copy = configuration.copy() as? URLSessionConfiguration ?? .ephemeral
        copy.urlCache = nil
        copy.httpCookieStorage = nil
        self.session = URLSession(configuration: copy)
    }

    public func post(_ receipt: [UInt8], deadline: ContinuousClock.Instant) async -> ReceiptPostAnswer {
        let remaining = ContinuousClock.now.duration(to: deadline)
        let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
        guard seconds > 0 else { return .retryLater }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(receipt)
        let prepared = request
        let session = self.session
        // The timeout above bounds silence between bytes; the task below bounds the whole exchange.
        return await withTaskGroup(of: ReceiptPostAnswer?.self) { group in
            group.addTask {
                guard let (_, response) = try? await session.data(for: prepared),
                    let status = (response as? HTTPURLResponse)?.statusCode
                else { return .retryLater }
                switch status {
                case 200..<300: return .recorded
                case 400, 404, 413, 422: return .refused(status: status)
                default: return .retryLater
                }
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .retryLater
        }
    }
}
