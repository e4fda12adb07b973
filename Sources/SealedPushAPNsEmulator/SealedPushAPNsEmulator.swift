// SealedPushAPNsEmulator
