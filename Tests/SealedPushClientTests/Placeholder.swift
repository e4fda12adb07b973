import Testing

@Test func placeholder_SealedPushClientTests() {}
