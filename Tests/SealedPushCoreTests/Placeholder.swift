import Testing

@Test func placeholder_SealedPushCoreTests() {}
