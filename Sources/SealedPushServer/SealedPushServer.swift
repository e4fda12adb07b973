// SealedPushServer
