import SealedPushCore

// Descriptions and mirrors that never expose private key material (`print`, `dump`, test failure messages).

extension DeviceKeyRing.Key: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key id and times; never the private key.
    public var description: String {
        "DeviceKeyRing.Key(keyId: \(keyID.hex), createdAt: \(createdAt), retiredAt: \(retiredAt.map(String.init) ?? "nil"))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the private key.
    public var customMirror: Mirror {
        Mirror(self, children: ["keyID": keyID, "createdAt": createdAt, "retiredAt": retiredAt as Any])
    }
}

extension DeviceKeyRing: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key ids and times; never private keys.
    public var description: String {
        "DeviceKeyRing(\(keys.map(\.description).joined(separator: ", ")))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror listing the keys without private key material.
    public var customMirror: Mirror {
        Mirror(self, children: ["keys": keys], displayStyle: .struct)
    }
}

extension EnvelopeOpener: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The topic and key ids; never private keys.
    public var description: String {
        let devices = deviceKeyIDs.map(\.hex).sorted().joined(separator: ", ")
        let servers = serverKeyIDs.map(\.hex).sorted().joined(separator: ", ")
        return "EnvelopeOpener(topic: \(topic), deviceKeys: [\(devices)], serverKeys: [\(servers)])"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without private key material.
    public var customMirror: Mirror {
        Mirror(self, children: ["topic": topic, "deviceKeyIDs": deviceKeyIDs, "serverKeyIDs": serverKeyIDs])
    }
}

extension InMemoryKeyStore: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access mode, availability and the held key ids; never the stored key ring bytes.
    public var description: String {
        let ids = (try? loadKeyRing())??.keys.map(\.keyID.hex).joined(separator: ", ")
        return "InMemoryKeyStore(readOnly: \(isReadOnly), keys: [\(ids ?? "unavailable")])"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the access mode only.
    public var customMirror: Mirror {
        Mirror(self, children: ["isReadOnly": isReadOnly, "description": description], displayStyle: .class)
    }
}

extension HPKERecipientWrapper: CustomReflectable {
    /// An empty mirror: the context holds the AEAD key.
    var customMirror: Mirror { Mirror(self, children: [:]) }
}
