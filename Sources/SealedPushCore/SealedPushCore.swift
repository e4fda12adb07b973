// SealedPushCore
