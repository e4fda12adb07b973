import Testing

@Test func placeholder_SealedPushConformanceTests() {}
