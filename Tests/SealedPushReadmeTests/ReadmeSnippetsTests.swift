import Foundation
import Testing

/// The README's Swift snippets are the ones `ReadmeSnippets.swift` compiles: each ```swift block of README.md, its
/// lines compared without their indentation, stands in that file as a run of consecutive lines, and its `import`
/// lines are that file's.
@Suite struct ReadmeSnippetsTests {
    private static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    private static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// Each ```swift block of the README, as its lines without indentation and without empty lines.
    static func readmeBlocks() throws -> [[String]] {
        let readme = testsFolder.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        var blocks: [[String]] = []
        var inBlock = false
        var current: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !inBlock {
                if line.hasPrefix("```swift") {
                    inBlock = true
                    current = []
                }
            } else if line.hasPrefix("```") {
                blocks.append(lines(current.joined(separator: "\n")))
                inBlock = false
            } else {
                current.append(line)
            }
        }
        return blocks
    }

    @Test func everySwiftBlockOfTheReadmeIsCompiled() throws {
        let blocks = try Self.readmeBlocks()
        #expect(
            blocks.count >= 3,
            "README.md has \(blocks.count) Swift blocks; it had three (the backend's, the blobs', the extension's)")
        let compiled = Self.lines(
            try String(contentsOf: Self.testsFolder.appendingPathComponent("ReadmeSnippets.swift"), encoding: .utf8))
        for (index, block) in blocks.enumerated() {
            let imports = block.filter { $0.hasPrefix("import ") }
            let code = block.filter { !$0.hasPrefix("import ") }
            for line in imports {
                #expect(
                    compiled.contains(line), "README Swift block \(index + 1): \(line) is not in ReadmeSnippets.swift")
            }
            let found =
                !code.isEmpty && code.count <= compiled.count
                && (0...(compiled.count - code.count)).contains { Array(compiled[$0..<$0 + code.count]) == code }
            #expect(
                found,
                """
                README Swift block \(index + 1) (from "\(code.first ?? "")") is not in ReadmeSnippets.swift as \
                written: copy it there (the compiler then checks it), or fix the README
                """)
        }
    }
}
