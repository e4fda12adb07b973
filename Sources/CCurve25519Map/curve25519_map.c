// Arithmetic modulo p = 2^255 - 19 in radix 2^51 (five 64-bit limbs, 128-bit products), just enough for the
// birational map from Edwards y to Montgomery u: one inversion (Fermat, z^(p-2)), one multiplication, encoding.
//
// Limb bounds: inputs to fe_mul/fe_sq have limbs below 2^54; 19 * 2^54 * 2^54 * 5 < 2^128, so no accumulator
// overflows. Outputs have limbs below 2^51 + 2^13.

#include "curve25519_map.h"

#include <string.h>

#if defined(__SIZEOF_INT128__)

typedef unsigned __int128 u128;
typedef uint64_t fe[5];

static const uint64_t mask51 = ((uint64_t)1 << 51) - 1;

static void fe_carry(fe h, u128 r0, u128 r1, u128 r2, u128 r3, u128 r4) {
    uint64_t carry;
    carry = (uint64_t)(r0 >> 51); r1 += carry; uint64_t h0 = (uint64_t)r0 & mask51;
    carry = (uint64_t)(r1 >> 51); r2 += carry; uint64_t h1 = (uint64_t)r1 & mask51;
    carry = (uint64_t)(r2 >> 51); r3 += carry; uint64_t h2 = (uint64_t)r2 & mask51;
    carry = (uint64_t)(r3 >> 51); r4 += carry; uint64_t h3 = (uint64_t)r3 & mask51;
    carry = (uint64_t)(r4 >> 51);              uint64_t h4 = (uint64_t)r4 & mask51;
    h0 += carry * 19;
    h1 += h0 >> 51;
    h0 &= mask51;
    h[0] = h0; h[1] = h1; h[2] = h2; h[3] = h3; h[4] = h4;
}

static void fe_mul(fe h, const fe f, const fe g) {
    const uint64_t g1_19 = 19 * g[1], g2_19 = 19 * g[2], g3_19 = 19 * g[3], g4_19 = 19 * g[4];
    u128 r0 = (u128)f[0] * g[0] + (u128)f[1] * g4_19 + (u128)f[2] * g3_19 + (u128)f[3] * g2_19 + (u128)f[4] * g1_19;
    u128 r1 = (u128)f[0] * g[1] + (u128)f[1] * g[0] + (u128)f[2] * g4_19 + (u128)f[3] * g3_19 + (u128)f[4] * g2_19;
    u128 r2 = (u128)f[0] * g[2] + (u128)f[1] * g[1] + (u128)f[2] * g[0] + (u128)f[3] * g4_19 + (u128)f[4] * g3_19;
    u128 r3 = (u128)f[0] * g[3] + (u128)f[1] * g[2] + (u128)f[2] * g[1] + (u128)f[3] * g[0] + (u128)f[4] * g4_19;
    u128 r4 = (u128)f[0] * g[4] + (u128)f[1] * g[3] + (u128)f[2] * g[2] + (u128)f[3] * g[1] + (u128)f[4] * g[0];
    fe_carry(h, r0, r1, r2, r3, r4);
}

static void fe_sq(fe h, const fe f) {
    const uint64_t f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3], f4 = f[4];
    const uint64_t f0_2 = 2 * f0, f1_2 = 2 * f1, f2_2 = 2 * f2, f3_2 = 2 * f3;
    const uint64_t f3_19 = 19 * f3, f4_19 = 19 * f4;
    u128 r0 = (u128)f0 * f0 + (u128)f1_2 * f4_19 + (u128)f2_2 * f3_19;
    u128 r1 = (u128)f0_2 * f1 + (u128)f2_2 * f4_19 + (u128)f3 * f3_19;
    u128 r2 = (u128)f0_2 * f2 + (u128)f1 * f1 + (u128)f3_2 * f4_19;
    u128 r3 = (u128)f0_2 * f3 + (u128)f1_2 * f2 + (u128)f4 * f4_19;
    u128 r4 = (u128)f0_2 * f4 + (u128)f1_2 * f3 + (u128)f2 * f2;
    fe_carry(h, r0, r1, r2, r3, r4);
}

/// h = f^(2^n), n >= 1.
static void fe_sq_n(fe h, const fe f, int n) {
    fe_sq(h, f);
    for (int i = 1; i < n; i++) fe_sq(h, h);
}

/// h = z^(p - 2) = z^(2^255 - 21), the inverse of z (0 for z = 0), by the usual addition chain.
static void fe_invert(fe h, const fe z) {
    fe z2, z9, z11, z_5_0, z_10_0, z_20_0, z_50_0, z_100_0, t;
    fe_sq(z2, z);                                   // z^2
    fe_sq_n(t, z2, 2);                              // z^8
    fe_mul(z9, t, z);                               // z^9
    fe_mul(z11, z9, z2);                            // z^11
    fe_sq(t, z11);                                  // z^22
    fe_mul(z_5_0, t, z9);                           // z^(2^5 - 1)
    fe_sq_n(t, z_5_0, 5);   fe_mul(z_10_0, t, z_5_0);     // z^(2^10 - 1)
    fe_sq_n(t, z_10_0, 10); fe_mul(z_20_0, t, z_10_0);    // z^(2^20 - 1)
    fe_sq_n(t, z_20_0, 20); fe_mul(t, t, z_20_0);         // z^(2^40 - 1)
    fe_sq_n(t, t, 10);      fe_mul(z_50_0, t, z_10_0);    // z^(2^50 - 1)
    fe_sq_n(t, z_50_0, 50); fe_mul(z_100_0, t, z_50_0);   // z^(2^100 - 1)
    fe_sq_n(t, z_100_0, 100); fe_mul(t, t, z_100_0);      // z^(2^200 - 1)
    fe_sq_n(t, t, 50);      fe_mul(t, t, z_50_0);         // z^(2^250 - 1)
    fe_sq_n(t, t, 5);       fe_mul(h, t, z11);            // z^(2^255 - 32 + 11)
}

static uint64_t load64_le(const uint8_t *s) {
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--) w = (w << 8) | s[i];
    return w;
}

static void store64_le(uint8_t *s, uint64_t w) {
    for (int i = 0; i < 8; i++) { s[i] = (uint8_t)w; w >>= 8; }
}

/// The low 255 bits of s (bit 255 cleared), not necessarily reduced below p.
static void fe_frombytes(fe h, const uint8_t s[32]) {
    const uint64_t w0 = load64_le(s), w1 = load64_le(s + 8), w2 = load64_le(s + 16);
    const uint64_t w3 = load64_le(s + 24) & 0x7fffffffffffffffULL;
    h[0] = w0 & mask51;
    h[1] = ((w0 >> 51) | (w1 << 13)) & mask51;
    h[2] = ((w1 >> 38) | (w2 << 26)) & mask51;
    h[3] = ((w2 >> 25) | (w3 << 39)) & mask51;
    h[4] = w3 >> 12;
}

/// The canonical encoding (fully reduced below p) of f.
static void fe_tobytes(uint8_t s[32], const fe f) {
    uint64_t h0 = f[0], h1 = f[1], h2 = f[2], h3 = f[3], h4 = f[4], carry;
    for (int round = 0; round < 2; round++) {
        carry = h0 >> 51; h0 &= mask51; h1 += carry;
        carry = h1 >> 51; h1 &= mask51; h2 += carry;
        carry = h2 >> 51; h2 &= mask51; h3 += carry;
        carry = h3 >> 51; h3 &= mask51; h4 += carry;
        carry = h4 >> 51; h4 &= mask51; h0 += 19 * carry;
    }
    // Now h < 2^255 + 19 * 2; q = 1 exactly when h >= p, i.e. when h + 19 carries out of bit 255.
    uint64_t q = (h0 + 19) >> 51;
    q = (h1 + q) >> 51;
    q = (h2 + q) >> 51;
    q = (h3 + q) >> 51;
    q = (h4 + q) >> 51;
    h0 += 19 * q;
    carry = h0 >> 51; h0 &= mask51; h1 += carry;
    carry = h1 >> 51; h1 &= mask51; h2 += carry;
    carry = h2 >> 51; h2 &= mask51; h3 += carry;
    carry = h3 >> 51; h3 &= mask51; h4 += carry;
    h4 &= mask51;  // drops the 2^255 that h + 19 - p added
    store64_le(s, h0 | (h1 << 51));
    store64_le(s + 8, (h1 >> 13) | (h2 << 38));
    store64_le(s + 16, (h2 >> 26) | (h3 << 25));
    store64_le(s + 24, (h3 >> 39) | (h4 << 12));
}

int sealedpush_x25519_u_from_ed25519(uint8_t u[32], const uint8_t edwards[32]) {
    fe y, one_plus_y, one_minus_y, inverse, result;
    uint8_t check[32];
    fe_frombytes(y, edwards);
    // 1 + y; 1 - y computed as 2p + 1 - y limb by limb (limbs of 2p: 2^52 - 38, then 2^52 - 2), never negative.
    one_plus_y[0] = y[0] + 1;
    one_minus_y[0] = ((uint64_t)1 << 52) - 38 + 1 - y[0];
    for (int i = 1; i < 5; i++) {
        one_plus_y[i] = y[i];
        one_minus_y[i] = ((uint64_t)1 << 52) - 2 - y[i];
    }
    fe_tobytes(check, one_minus_y);
    uint8_t any = 0;
    for (int i = 0; i < 32; i++) any |= check[i];
    if (any == 0) {  // y = 1: the neutral element
        memset(u, 0, 32);
        return -1;
    }
    fe_invert(inverse, one_minus_y);
    fe_mul(result, one_plus_y, inverse);
    fe_tobytes(u, result);
    return 0;
}

#else

int sealedpush_x25519_u_from_ed25519(uint8_t u[32], const uint8_t edwards[32]) {
    (void)edwards;
    memset(u, 0, 32);
    return -1;
}

#endif
