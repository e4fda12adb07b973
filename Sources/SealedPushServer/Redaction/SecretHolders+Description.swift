import SealedPushCore

// Descriptions and mirrors for every server type that holds a secret: `print`, string interpolation,
// `String(reflecting:)`, `dump` and test failure messages show ids and times only — never a private key, a shared
// secret or a provider token (the JWT is the APNs credential). A mirror is what `dump` and the default description
// of any containing type walk, so redacting these leaves redacts every value that holds them.

extension ProviderToken: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The issue time and generation; never the JWT.
    public var description: String {
        "ProviderToken(issuedAt: \(issuedAt.timeIntervalSince1970), generation: \(generation), jwt: <redacted>)"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the JWT.
    public var customMirror: Mirror {
        Mirror(self, children: ["issuedAt": issuedAt, "generation": generation, "jwt": "<redacted>"],
               displayStyle: .struct)
    }
}

extension ProviderTokenCache: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The issuer's key and team ids; never the token or the signing key.
    public var description: String {
        "ProviderTokenCache(keyID: \(issuer.keyID), teamID: \(issuer.teamID), renewalAge: \(renewalAge))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the issuer's ids only.
    public var customMirror: Mirror {
        Mirror(self, children: ["issuer": issuer, "renewalAge": renewalAge], displayStyle: .class)
    }
}

extension ProviderTokenIssuer: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key and team ids; never the signing key.
    public var description: String { "ProviderTokenIssuer(keyID: \(keyID), teamID: \(teamID))" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the ids only.
    public var customMirror: Mirror {
        Mirror(self, children: ["keyID": keyID, "teamID": teamID], displayStyle: .struct)
    }
}

extension APNsSigningKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A fixed text: the key has no public id of its own (the APNs key id travels with the issuer).
    public var description: String { "APNsSigningKey(P-256, <redacted>)" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// An empty mirror.
    public var customMirror: Mirror { Mirror(self, children: [:], displayStyle: .class) }
}

extension ServerIdentity: CustomDebugStringConvertible, CustomReflectable {
    /// Same as ``description``: the key id only.
    public var debugDescription: String { description }

    /// A mirror with the key id and public key only.
    public var customMirror: Mirror {
        Mirror(self, children: ["keyID": keyID, "publicKeyText": publicKeyText], displayStyle: .struct)
    }
}

extension Sealer: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The topic and the identity's key id; never the private key or cached shared secrets.
    public var description: String { "Sealer(topic: \(topic), identity: \(identity.keyID.hex))" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the topic and key id only.
    public var customMirror: Mirror {
        Mirror(self, children: ["topic": topic, "identity": identity], displayStyle: .class)
    }
}

extension IdentityRing: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The topic and the key ids of the current, staged and previous identities.
    public var description: String {
        let previous = self.previous.map(\.keyID.hex).joined(separator: ", ")
        return "IdentityRing(topic: \(topic), current: \(current.keyID.hex), next: \(next?.keyID.hex ?? "nil"), "
            + "previous: [\(previous)])"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the key ids only.
    public var customMirror: Mirror {
        Mirror(self, children: ["topic": topic, "current": current, "next": next as Any, "previous": previous],
               displayStyle: .class)
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The length only.
    package var description: String { "SecretBytes(\(count) bytes, <redacted>)" }

    /// Same as ``description``.
    package var debugDescription: String { description }

    /// A mirror with the length only.
    package var customMirror: Mirror { Mirror(self, children: ["count": count], displayStyle: .class) }
}
