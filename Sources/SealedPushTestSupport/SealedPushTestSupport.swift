// SealedPushTestSupport
