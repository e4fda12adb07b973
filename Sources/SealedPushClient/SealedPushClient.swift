// SealedPushClient
