// Arithmetic modulo p = 2^255 - 19 in radix 2^51 (five 64-bit limbs, 128-bit products), just enough for the
// birational map from Edwards y to Montgomery u: one inversion, one multiplication, encoding. The inversion is
// the variable-time safegcd below (the map's inputs are public); Fermat's z^(p-2) is kept as the reference the
// tests compare it with.
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

// MARK: Variable-time inversion (safegcd)
//
// The map only ever inverts public values, so it may take variable time. This is the Bernstein-Yang "safegcd"
// algorithm (https://gcd.cr.yp.to/papers.html#safegcd) in its variable-time form: divsteps are batched 62 at a
// time into a 2x2 transition matrix computed from the low bits of f and g alone, then applied to the full-size
// f, g (which converge to +-1, 0) and to the Bezout coefficients d, e (kept modulo p). About three times faster
// than the 265 multiplications of fe_invert; tests check the two agree.
//
// Numbers are signed62: value = sum(v[i] * 2^(62 i)), limbs 0-3 in [0, 2^62), limb 4 signed.

typedef struct {
    int64_t v[5];
} s62;

static const int64_t mask62 = (int64_t)(UINT64_MAX >> 2);

// p = 2^255 - 19 = (2^62 - 19) + (2^62 - 1)(2^62 + 2^124 + 2^186) + 127 * 2^248.
static const s62 modulus62 = {{(int64_t)(UINT64_MAX >> 2) - 18, (int64_t)(UINT64_MAX >> 2),
                               (int64_t)(UINT64_MAX >> 2), (int64_t)(UINT64_MAX >> 2), 127}};

/// 62 divsteps on the low bits of f (odd) and g; returns the new eta (= -delta) and sets t = [u, v; q, r], the
/// transition matrix times 2^62, so that [u v; q r] [f g]^T = 2^62 [f' g']^T. |u| + |v| and |q| + |r| are at
/// most 2^62, so the entries fit int64; they are computed in wrapping uint64 arithmetic.
static int64_t divsteps62_var(int64_t eta, uint64_t f, uint64_t g, int64_t t[4]) {
    uint64_t u = 1, v = 0, q = 0, r = 1, swap;
    int remaining = 62;
    for (;;) {
        // Shift out the zero bits at the bottom of g (at most `remaining`; g = 0 shifts them all).
        int zeros = __builtin_ctzll(g | (UINT64_MAX << remaining));
        g >>= zeros;
        u <<= zeros;
        v <<= zeros;
        eta -= zeros;
        remaining -= zeros;
        if (remaining == 0) break;
        // g is odd. If eta < 0, (eta, f, g) = (-eta, g, -f), with the matrix rows alike.
        if (eta < 0) {
            eta = -eta;
            swap = f; f = g; g = (uint64_t)0 - swap;
            swap = u; u = q; q = (uint64_t)0 - swap;
            swap = v; v = r; r = (uint64_t)0 - swap;
        }
        // Cancel up to 6 (and at most eta + 1, at most `remaining`) bottom bits of g with a multiple of f:
        // w = -g/f mod 2^limit, where f (f^2 - 2) = -1/f mod 2^6 for odd f.
        int limit = (eta + 1) < remaining ? (int)(eta + 1) : remaining;
        if (limit > 6) limit = 6;
        const uint64_t mask = (UINT64_MAX >> (64 - limit));
        const uint64_t w = (g * (f * (f * f - 2))) & mask;
        g += f * w;
        q += u * w;
        r += v * w;
    }
    t[0] = (int64_t)u; t[1] = (int64_t)v; t[2] = (int64_t)q; t[3] = (int64_t)r;
    return eta;
}

/// [f, g] = t [f, g] / 2^62 (exact: the low 62 bits of both products are zero).
static void update_fg62(s62 *f, s62 *g, const int64_t t[4]) {
    const int64_t u = t[0], v = t[1], q = t[2], r = t[3];
    __int128 cf = (__int128)u * f->v[0] + (__int128)v * g->v[0];
    __int128 cg = (__int128)q * f->v[0] + (__int128)r * g->v[0];
    cf >>= 62;
    cg >>= 62;
    for (int i = 1; i < 5; i++) {
        cf += (__int128)u * f->v[i] + (__int128)v * g->v[i];
        cg += (__int128)q * f->v[i] + (__int128)r * g->v[i];
        f->v[i - 1] = (int64_t)cf & mask62;
        g->v[i - 1] = (int64_t)cg & mask62;
        cf >>= 62;
        cg >>= 62;
    }
    f->v[4] = (int64_t)cf;
    g->v[4] = (int64_t)cg;
}

/// [d, e] = t [d, e] / 2^62 mod p, for d, e in (-2p, p); the results are again in (-2p, p). A multiple of p
/// (md, me) is added first so that the low 62 bits vanish; it also adds p to a negative input.
static void update_de62(s62 *d, s62 *e, const int64_t t[4], uint64_t p_inverse62) {
    const int64_t u = t[0], v = t[1], q = t[2], r = t[3];
    const int64_t d_sign = d->v[4] >> 63, e_sign = e->v[4] >> 63;
    int64_t md = (u & d_sign) + (v & e_sign);
    int64_t me = (q & d_sign) + (r & e_sign);
    __int128 cd = (__int128)u * d->v[0] + (__int128)v * e->v[0];
    __int128 ce = (__int128)q * d->v[0] + (__int128)r * e->v[0];
    md -= (int64_t)((p_inverse62 * (uint64_t)cd + (uint64_t)md) & (uint64_t)mask62);
    me -= (int64_t)((p_inverse62 * (uint64_t)ce + (uint64_t)me) & (uint64_t)mask62);
    cd += (__int128)modulus62.v[0] * md;
    ce += (__int128)modulus62.v[0] * me;
    cd >>= 62;
    ce >>= 62;
    for (int i = 1; i < 5; i++) {
        cd += (__int128)u * d->v[i] + (__int128)v * e->v[i] + (__int128)modulus62.v[i] * md;
        ce += (__int128)q * d->v[i] + (__int128)r * e->v[i] + (__int128)modulus62.v[i] * me;
        d->v[i - 1] = (int64_t)cd & mask62;
        e->v[i - 1] = (int64_t)ce & mask62;
        cd >>= 62;
        ce >>= 62;
    }
    d->v[4] = (int64_t)cd;
    e->v[4] = (int64_t)ce;
}

/// Brings limbs 0-3 back into [0, 2^62) after limb-wise arithmetic, carrying (signed) into limb 4.
static void carry62(s62 *x) {
    for (int i = 0; i < 4; i++) {
        x->v[i + 1] += x->v[i] >> 62;
        x->v[i] &= mask62;
    }
}

/// x += p if x < 0 (x in (-2p, p) becomes (-p, p)).
static void add_modulus_if_negative62(s62 *x) {
    if (x->v[4] >= 0) return;
    for (int i = 0; i < 5; i++) x->v[i] += modulus62.v[i];
    carry62(x);
}

static void negate62(s62 *x) {
    for (int i = 0; i < 5; i++) x->v[i] = -x->v[i];
    carry62(x);
}

static int is_zero62(const s62 *x) {
    return (x->v[0] | x->v[1] | x->v[2] | x->v[3] | x->v[4]) == 0;
}

/// out = x^-1 mod p for x in [0, p) given as 4 little-endian 64-bit words (0 for x = 0). Variable time.
static void invert_var(uint64_t out[4], const uint64_t x[4]) {
    // 1/p mod 2^64 by Newton's iteration (each step doubles the correct low bits; p is odd).
    const uint64_t p0 = (uint64_t)0 - 19;
    uint64_t p_inverse = p0;  // correct to 3 bits: p0 * p0 = 1 mod 8 for odd p0
    for (int i = 0; i < 5; i++) p_inverse *= 2 - p0 * p_inverse;
    p_inverse &= (uint64_t)mask62;

    s62 f = modulus62, d = {{0, 0, 0, 0, 0}}, e = {{1, 0, 0, 0, 0}};
    s62 g = {{(int64_t)(x[0] & (uint64_t)mask62), (int64_t)(((x[0] >> 62) | (x[1] << 2)) & (uint64_t)mask62),
              (int64_t)(((x[1] >> 60) | (x[2] << 4)) & (uint64_t)mask62),
              (int64_t)(((x[2] >> 58) | (x[3] << 6)) & (uint64_t)mask62), (int64_t)(x[3] >> 56)}};
    int64_t eta = -1;
    int64_t t[4];
    while (!is_zero62(&g)) {
        eta = divsteps62_var(eta, (uint64_t)f.v[0], (uint64_t)g.v[0], t);
        update_de62(&d, &e, t, p_inverse);
        update_fg62(&f, &g, t);
    }
    // f = +-1 = d x (mod p): the inverse is sign(f) d, brought into [0, p).
    add_modulus_if_negative62(&d);
    if (f.v[4] < 0) negate62(&d);
    add_modulus_if_negative62(&d);
    out[0] = (uint64_t)d.v[0] | ((uint64_t)d.v[1] << 62);
    out[1] = ((uint64_t)d.v[1] >> 2) | ((uint64_t)d.v[2] << 60);
    out[2] = ((uint64_t)d.v[2] >> 4) | ((uint64_t)d.v[3] << 58);
    out[3] = ((uint64_t)d.v[3] >> 6) | ((uint64_t)d.v[4] << 56);
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

static void words_from_bytes(uint64_t w[4], const uint8_t s[32]) {
    for (int i = 0; i < 4; i++) w[i] = load64_le(s + 8 * i);
}

static void bytes_from_words(uint8_t s[32], const uint64_t w[4]) {
    for (int i = 0; i < 4; i++) store64_le(s + 8 * i, w[i]);
}

int sealedpush_x25519_u_from_ed25519(uint8_t u[32], const uint8_t edwards[32]) {
    fe y, one_plus_y, one_minus_y, inverse, result;
    uint8_t bytes[32];
    uint64_t words[4], inverse_words[4];
    fe_frombytes(y, edwards);
    // 1 + y; 1 - y computed as 2p + 1 - y limb by limb (limbs of 2p: 2^52 - 38, then 2^52 - 2), never negative.
    one_plus_y[0] = y[0] + 1;
    one_minus_y[0] = ((uint64_t)1 << 52) - 38 + 1 - y[0];
    for (int i = 1; i < 5; i++) {
        one_plus_y[i] = y[i];
        one_minus_y[i] = ((uint64_t)1 << 52) - 2 - y[i];
    }
    fe_tobytes(bytes, one_minus_y);
    words_from_bytes(words, bytes);
    if ((words[0] | words[1] | words[2] | words[3]) == 0) {  // y = 1: the neutral element
        memset(u, 0, 32);
        return -1;
    }
    invert_var(inverse_words, words);
    bytes_from_words(bytes, inverse_words);
    fe_frombytes(inverse, bytes);
    fe_mul(result, one_plus_y, inverse);
    fe_tobytes(u, result);
    return 0;
}

int sealedpush_fe25519_invert(uint8_t out[32], const uint8_t in[32], int variable_time) {
    fe x, inverse;
    uint64_t words[4], inverse_words[4];
    fe_frombytes(x, in);
    fe_tobytes(out, x);  // canonical
    if (variable_time) {
        words_from_bytes(words, out);
        invert_var(inverse_words, words);
        bytes_from_words(out, inverse_words);
    } else {
        fe_invert(inverse, x);
        fe_tobytes(out, inverse);
    }
    return 0;
}

#else

int sealedpush_x25519_u_from_ed25519(uint8_t u[32], const uint8_t edwards[32]) {
    (void)edwards;
    memset(u, 0, 32);
    return -1;
}

int sealedpush_fe25519_invert(uint8_t out[32], const uint8_t in[32], int variable_time) {
    (void)in;
    (void)variable_time;
    memset(out, 0, 32);
    return -1;
}

#endif
