import Testing

@Test func placeholder_SealedPushServerTests() {}
