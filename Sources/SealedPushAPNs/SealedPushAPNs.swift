// SealedPushAPNs
