import Testing

@Test func placeholder_SealedPushAPNsEmulatorTests() {}
