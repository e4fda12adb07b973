#ifndef SEALEDPUSH_CURVE25519_MAP_H
#define SEALEDPUSH_CURVE25519_MAP_H

#include <stdint.h>

/// The X25519 (Montgomery) u-coordinate of an Ed25519 point given in its 32-byte encoding:
/// u = (1 + y) / (1 - y) mod 2^255 - 19 (RFC 7748 §4.1, the birational map). The sign bit of x (bit 255) is
/// ignored: a point and its negation have the same u.
///
/// SealedPush uses it to derive an X25519 public key from libsodium's fixed-base Edwards multiplication (a
/// precomputed table, about twice as fast as libsodium 1.0.18's Montgomery ladder for X25519(sk, 9)). The input
/// and output are public values, so the inversion inside is a variable-time one (safegcd).
///
/// - Parameters:
///   - u: Receives the 32-byte little-endian u-coordinate, fully reduced.
///   - edwards: The encoded Ed25519 point.
/// - Returns: 0 on success; -1 if y = 1 (the neutral element, which has no u-coordinate) or if the compiler has
///   no 128-bit integers (the caller then uses the Montgomery ladder). `u` is zeroed on failure.
int sealedpush_x25519_u_from_ed25519(uint8_t u[32], const uint8_t edwards[32]);

/// The inverse of a field element modulo 2^255 - 19 (0 for 0), by either of the two methods the map could use:
/// `variable_time` nonzero for safegcd (what the map uses), zero for Fermat's z^(p-2) (constant time). Exposed
/// so tests can check one against the other.
///
/// - Parameters:
///   - out: Receives the canonical 32-byte little-endian inverse.
///   - in: A 32-byte little-endian field element; bit 255 is ignored, values >= p are reduced.
///   - variable_time: Which method.
/// - Returns: 0, or -1 (and `out` zeroed) without 128-bit integers.
int sealedpush_fe25519_invert(uint8_t out[32], const uint8_t in[32], int variable_time);

#endif
