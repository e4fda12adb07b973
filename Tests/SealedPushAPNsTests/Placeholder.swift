import Testing

@Test func placeholder_SealedPushAPNsTests() {}
