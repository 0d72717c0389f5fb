/* Fused per-weight kernels of Bayes by Backprop (CPU, float32, OpenMP + SIMD).
 *
 * For every weight j and Monte-Carlo sample s, one forward pass computes
 *   eps = N(0,1) noise from a counter-based generator (seed, index s * n + j),
 *   sigma = softplus(rho), w = mu + sigma * eps, and the sums that make up the KL;
 * it stores w, eps and (Monte-Carlo KL, when a backward pass follows) d log p(w) / dw. The
 * backward pass reads rho again, recomputes sigma, sigmoid(rho) and sigmoid(rho) / sigma, and
 * applies
 *   d loss / d w = grad_w - grad_kl / S * d log p(w) / dw,
 *   grad_mu = sum_s d loss/dw,
 *   grad_rho = sum_s d loss/dw * eps * sigmoid(rho) - grad_kl * sigmoid(rho) / softplus(rho)
 * (Monte-Carlo KL: log q contributes -sum log sigma only), or the closed-form KL terms. The last
 * ratio is computed so that it stays finite (-> 1) for very negative rho, where sigma underflows.
 * The forward pass is compute-bound and the backward pass waits on memory: storing sigmoid(rho)
 * and the ratio (as before) cost the forward pass two streams and two divisions, recomputing them
 * costs the backward pass nothing measurable (benchmarks/profile_step.py; d log p / dw, an exp
 * and a division more, is still stored: recomputed it doubled the backward pass).
 *
 * Exactness: the math below (exp, log, log1p, sin/cos) is inline code made of IEEE-exact
 * elementary operations only (+, -, *, /, sqrt, fmaf where the CPU has FMA, integer and bit
 * operations); no libm or libmvec call is on these paths. An elementary IEEE operation rounds the
 * same in a vector lane as in scalar code, so the backward pass recomputes bit for bit the sigma
 * the forward pass sampled w with, whatever the loop's vector width, tail or thread split
 * (tests/test_native.py checks vector against scalar evaluation and the forward's w against
 * sigma * eps + mu from the same function); d log p / dw is the stored value at the sampled w.
 * Accuracy (tests/test_native.py, against float64): exp within 1 ulp, log 0.75, log1p on [0, 1]
 * 2, softplus 2.5, sigmoid 2.3, sigmoid / softplus 4.3 ulp; sin / cos of the noise's angles
 * within 1.2e-7 absolute.
 *
 * Noise: Box-Muller, both branches: one hashed pair (u1, u2) gives r cos(2 pi u2) and
 * r sin(2 pi u2), r = sqrt(-2 log u1): half the hashing, log and sqrt per normal. Index g's
 * normal is the cosine (bit 4 of g clear) or sine (set) branch of pair 16 (g >> 5) + (g & 15):
 * aligned groups of 32 indices, 16 cosines then 16 sines, so a vector loop writes both branches
 * contiguously. u2 has 24 bits, so the reduction of the angle to a quadrant and [-pi/4, pi/4) is
 * exact integer arithmetic. The noise depends on (seed, index) only: not on threads or blocks.
 *
 * Numerics: compiled WITHOUT -ffast-math (helpers/native.py): no reassociation, no reciprocal
 * rewrites, IEEE inf/NaN; -ffp-contract=off, so a multiply-add is fused only where fmaf() is
 * written (MADD, with __FMA__; otherwise a separate multiply and add, correctly rounded each).
 * Sums over weights are per-lane sums added once per chunk (see LANES) and OpenMP reductions
 * over chunks. Every parallel region flushes subnormals to zero (FTZ + DAZ) in its own threads
 * and restores each thread's previous mode before it returns: no floating-point mode leaks into
 * the caller's process. The Cauchy prior's log1p(w^2 / gamma^2) (unbounded argument) stays
 * glibc's (libmvec's vector log1pf where available).
 */
#include <math.h>
#include <stdint.h>
#include <omp.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#if defined(BBB_MVEC) && defined(__x86_64__) && !defined(__FAST_MATH__)
__attribute__((__simd__("notinbranch"))) float log1pf(float);
#endif

/* flush subnormals in this thread for the span of a parallel region, then restore its mode */
#if defined(__SSE__)
#define FTZ_ENTER unsigned int bbb_csr_ = _mm_getcsr(); _mm_setcsr(bbb_csr_ | 0x8040u);
#define FTZ_LEAVE _mm_setcsr(bbb_csr_);
#else
#define FTZ_ENTER
#define FTZ_LEAVE
#endif

/* a * b + c: one rounding where the CPU fuses it, else two (both within the accuracy above) */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define MADD(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define MADD(a, b, c) ((a) * (b) + (c))
#endif

#define CHUNK 4096
#define CLOSED (-1)
#define GAUSSIAN 0
#define MIXTURE 1
#define LAPLACE 2
#define CAUCHY 3
#define INLINE static inline __attribute__((always_inline))

INLINE uint32_t f2u(float f) { uint32_t u; __builtin_memcpy(&u, &f, 4); return u; }
INLINE float u2f(uint32_t u) { float f; __builtin_memcpy(&f, &u, 4); return f; }

/* ---- inline math on the ranges the kernels need (branch-free, no calls) ---- */

/* e^x for x in [-87, 88] (callers clamp): x = n ln2 + r, |r| <= ln2 / 2, Cephes' degree-7
 * polynomial, times 2^n built in the exponent bits */
INLINE float exp_in(float x) {
    const float shift = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float z = x * 1.44269504088896341f + shift;
    float n = z - shift;
    int32_t ni = (int32_t)(f2u(z) - f2u(shift));
    float r = MADD(n, -0.693359375f, x);
    r = MADD(n, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = MADD(p, r, 1.3981999507e-3f);
    p = MADD(p, r, 8.3334519073e-3f);
    p = MADD(p, r, 4.1665795894e-2f);
    p = MADD(p, r, 1.6666665459e-1f);
    p = MADD(p, r, 5.0000001201e-1f);
    float y = MADD(p, r * r, r) + 1.0f;
    return y * u2f((uint32_t)(ni + 127) << 23);
}

/* log(2^k (1 + f)) for f in about [sqrt(1/2) - 1, sqrt(2) - 1]: musl's logf (s = f / (2 + f),
 * a minimax polynomial in s^2) */
INLINE float log_kf(int32_t k, float f) {
    float s = f / (2.0f + f);
    float z = s * s, w = z * z;
    float t1 = w * MADD(w, 0.24279078841f, 0.40000972152f);
    float t2 = z * MADD(w, 0.28498786688f, 0.66666662693f);
    float hfsq = 0.5f * f * f, dk = (float)k;
    return MADD(s, hfsq + t1 + t2, dk * 9.0580006145e-06f) - hfsq + f + dk * 6.9313812256e-01f;
}

/* x = 2^k m for a normal x > 0, m in [sqrt(1/2), sqrt(2)) */
INLINE float log_split(float x, int32_t *k) {
    uint32_t ix = f2u(x) + (0x3f800000u - 0x3f3504f3u);
    *k = (int32_t)(ix >> 23) - 0x7f;
    return u2f((ix & 0x007fffffu) + 0x3f3504f3u);
}

/* log(x) for a normal x > 0 (no 0, subnormal, inf or NaN) */
INLINE float log_in(float x) {
    int32_t k;
    float m = log_split(x, &k);
    return log_kf(k, m - 1.0f);
}

/* cos and sin of 2 pi b / 2^24 for an integer b in [0, 2^24): the quadrant and the remainder
 * in [-pi/4, pi/4) come exactly from b's bits; Cephes' sinf / cosf polynomials */
INLINE void sincos_turn(uint32_t b, float *cs, float *sn) {
    uint32_t v = b + 0x200000u;
    uint32_t q = (v >> 22) & 3u;
    float x = (float)((int32_t)(v & 0x3fffffu) - 0x200000) * 3.7450702e-07f; /* 2 pi / 2^24 */
    float z = x * x;
    float ps = MADD(MADD(z, -1.9515295891e-4f, 8.3321608736e-3f), z, -1.6666654611e-1f);
    float s = MADD(x * z, ps, x);
    float pc = MADD(MADD(z, 2.443315711809948e-5f, -1.388731625493765e-3f), z,
                    4.166664568298827e-2f);
    float c = MADD(z * z, pc, MADD(z, -0.5f, 1.0f));
    float c1 = q & 1u ? s : c, s1 = q & 1u ? c : s;
    /* signs as bits: quadrants 1, 2 negate the cosine, 2, 3 the sine (bit 1 of q + 1, of q) */
    *cs = u2f(f2u(c1) ^ (((q + 1u) & 2u) << 30));
    *sn = u2f(f2u(s1) ^ ((q & 2u) << 30));
}

INLINE uint32_t mix32(uint32_t x) {
    x ^= x >> 16; x *= 0x7feb352dU;
    x ^= x >> 15; x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

typedef struct { uint32_t k0, k1, k2; } keys_t;

static keys_t make_keys(uint64_t seed) {
    keys_t k;
    k.k0 = mix32((uint32_t)seed ^ 0x85ebca6bU);
    k.k1 = mix32((uint32_t)(seed >> 32) ^ 0xc2b2ae35U);
    k.k2 = mix32(k.k0 + k.k1 + 0x27d4eb2fU);
    return k;
}

/* standard normal pair from (keys, pair index): Box-Muller, the cosine and the sine branch of
 * u1 in (0, 1], u2 = b / 2^24 in [0, 1) (24 bits each) */
INLINE void noise_pair(keys_t k, uint32_t idx, float *e0, float *e1) {
    uint32_t h = mix32(idx ^ k.k0);
    uint32_t a = mix32(h + k.k2), b = mix32(h ^ k.k1);
    float u1 = ((float)(a >> 8) + 0.5f) * (1.0f / 16777216.0f);
    float r = sqrtf(-2.0f * log_in(u1)), cs, sn;
    sincos_turn(b >> 8, &cs, &sn);
    *e0 = r * cs;
    *e1 = r * sn;
}

/* the normals of indices [32 G0, 32 (G0 + ng)) into out[0 .. 32 ng) (see the noise above) */
INLINE void noise_groups(keys_t k, uint32_t G0, int64_t ng, float *out) {
    for (int64_t q = 0; q < ng; q++) {
        uint32_t base = (G0 + (uint32_t)q) * 16u;
        float *o = out + 32 * q;
#pragma omp simd
        for (int l = 0; l < 16; l++) {
            float e0, e1;
            noise_pair(k, base + (uint32_t)l, &e0, &e1);
            o[l] = e0;
            o[16 + l] = e1;
        }
    }
}

INLINE float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
/* max and min that keep a NaN in a (as the old clamps did: a NaN rho or w must reach the sums) */
INLINE float maxf(float a, float b) { return a < b ? b : a; }
INLINE float minf(float a, float b) { return b < a ? b : a; }

/* Clamp bound, hidden from the optimiser (a literal may let GCC rewrite exp(max(x, bound)) into
 * a select on the unclamped argument). Read once per kernel. */
typedef struct { float lo, dmax, y20; } lims_t;

static lims_t make_lims(void) {
    lims_t L = {-80.0f, 80.0f, 0.0f};
    __asm__("" : "+m"(L));
    L.y20 = exp_in(-20.0f); /* exp(x) at x = -20, as exp_abs computes it */
    return L;
}

/* y = exp(-|x|), held at exp(-80) (about 1.8e-35) below: the clamp keeps softplus(x) at
 * softplus(-80) for x < -80 */
INLINE float exp_abs(float x, lims_t L) { return exp_in(maxf(-fabsf(x), L.lo)); }

/* log(1 + y) for y in [0, 1]: 2 atanh(s), s = y / (2 + y) in [0, 1/3], a degree-4 polynomial in
 * s^2 for atanh(s) / s - 1 (fitted here; within 5e-9 of it, so the error is the float operations':
 * a few ulp) */
INLINE float log1p_01(float y) {
    float s = y / (2.0f + y), z = s * s, s2 = s + s;
    float q = MADD(MADD(MADD(1.401223391e-01f, z, 1.399956942e-01f), z, 2.001084983e-01f), z,
                   3.333320618e-01f);
    return MADD(s2, z * q, s2);
}

/* sigma = softplus(x) = max(x, 0) + log(1 + exp(-|x|)) from y = exp_abs(x); exact to float
 * precision for every x (the log term is below half an ulp of x beyond x = 20) */
INLINE float softplus_y(float x, float y) { return maxf(x, 0.0f) + log1p_01(y); }

INLINE float softplus_f(float x, lims_t L) { return softplus_y(x, exp_abs(x, L)); }

/* what the backward pass needs of rho besides sigma, packed in one float: y = exp(-|x|) with the
 * sign of -x (x > 0: -y), from which sigmoid(x) = (x > 0 ? 1 : y) / (1 + y) */
INLINE float rho_code(float x, float y) { return x > 0.0f ? -y : y; }

/* sigmoid(x) and sigmoid(x) / softplus(x) from rho_code and sp = softplus(x); the ratio stays
 * finite for every x: below x = -20 (y < exp(-20)) both are ~e^x and the ratio is 1 - e^x / 2 to
 * float precision */
INLINE void rho_derivs(float code, float sp, lims_t L, float *sg, float *ratio) {
    float y = fabsf(code);
    float s = (code < 0.0f ? 1.0f : y) / (1.0f + y);
    *sg = s;
    *ratio = ((code >= 0.0f) & (code < L.y20)) ? 1.0f - 0.5f * y : s / sp;
}

/* log softplus(x): = x to float precision below -20 (softplus(x) = e^x (1 - e^x / 2 + ...)) */
INLINE float log_softplus_f(float x, float sp) { return x < -20.0f ? x : log_in(sp); }

/* The scale mixture (p: ka, kb, ca, cb with k = 1/(2 sigma^2), c = log weight - log sigma -
 * log sqrt(2 pi)): log-densities a = ca - ka w^2, b = cb - kb w^2, d = a - b,
 * log p = max(a, b) + log1p(e), e = exp(-|d|) (|d| held at 80). */
INLINE float mixture_e(const float *p, float w, float *a, float *b, float *d, lims_t L) {
    float w2 = w * w;
    *a = MADD(-p[0], w2, p[2]);
    *b = MADD(-p[1], w2, p[3]);
    *d = *a - *b;
    return exp_in(maxf(-fabsf(*d), -L.dmax));
}

/* d log p / dw of the mixture from w, d and e: -2 w (ka r + kb q) with the responsibilities
 * r (wide) and q (narrow) = (1, e) / (1 + e) or (e, 1) / (1 + e): a sum of two positive terms,
 * no cancellation whatever sigma2 */
INLINE float mixture_grad(const float *p, float w, float d, float e) {
    float x = d >= 0.0f ? p[0] : p[1], y = d >= 0.0f ? p[1] : p[0];
    return (-2.0f * w) * MADD(y, e, x) / (1.0f + e);
}

/* log p(w) (p holds the prior's constants, see native.prior_constants) */
INLINE float logp_of(int kind, const float *p, float w, lims_t L) {
    if (kind == MIXTURE) {
        float a, b, d, e = mixture_e(p, w, &a, &b, &d, L);
        return maxf(a, b) + log1p_01(e);
    } else if (kind == GAUSSIAN) { /* p: 1/sigma^2, -log sigma - log sqrt(2 pi) */
        return p[1] - 0.5f * p[0] * w * w;
    } else if (kind == LAPLACE) { /* p: 1/b, -log(2 b) */
        return p[1] - fabsf(w) * p[0];
    } else { /* Cauchy, p: 1/gamma^2, -log(pi gamma) */
        return p[1] - log1pf(w * w * p[0]);
    }
}

/* d log p / dw */
INLINE float dlogp_of(int kind, const float *p, float w, lims_t L) {
    if (kind == MIXTURE) {
        float a, b, d, e = mixture_e(p, w, &a, &b, &d, L);
        return mixture_grad(p, w, d, e);
    } else if (kind == GAUSSIAN) {
        return -w * p[0];
    } else if (kind == LAPLACE) {
        return w > 0.0f ? -p[0] : (w < 0.0f ? p[0] : 0.0f);
    } else {
        float t = w * w * p[0];
        return -2.0f * w * p[0] / (1.0f + t);
    }
}

void bbb_normal(int64_t total, uint64_t seed, float *out, int threads) {
    keys_t k = make_keys(seed);
    int64_t ng = (total + 31) / 32, nfull = total / 32, per = CHUNK / 32;
    int64_t nchunks = (ng + per - 1) / per;
#pragma omp parallel num_threads(threads)
    {
        FTZ_ENTER
#pragma omp for schedule(static)
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t g0 = c * per, g1 = g0 + per < nfull ? g0 + per : nfull;
            if (g1 > g0) noise_groups(k, (uint32_t)g0, g1 - g0, out + 32 * g0);
            if (g0 + per >= ng && nfull < ng) { /* the last, partial group */
                float tmp[32];
                noise_groups(k, (uint32_t)nfull, 1, tmp);
                for (int64_t i = 32 * nfull; i < total; i++) out[i] = tmp[i - 32 * nfull];
            }
        }
        FTZ_LEAVE
    }
}

/* What the forward pass keeps for the backward pass: dl = d log p(w) / dw per sample (Monte-Carlo
 * KL; NULL: nothing, no backward pass follows, or the closed form, which needs nothing). The
 * backward pass reads rho again and recomputes sigma, sigmoid(rho) and sigmoid(rho) / sigma
 * from it with the same inline functions: it waits on memory, so this arithmetic is free there,
 * while storing them cost the (compute-bound) forward pass two streams. */

/* Sums over weights in LANES explicit lanes: the loops below run over rows of LANES weights, each
 * lane accumulating its own sums (a vector register for LANES = 16 with AVX-512, two with AVX2,
 * plain scalars otherwise), added up once per chunk (in double): no horizontal reduction in the
 * hot loop, and the same sums whatever the vector width.
 * Sums of logarithms as logarithms of products: per lane, sum_j log x_j over the 16 rows of a
 * block is log(prod_j m_j) + ln 2 * sum_j k_j for x_j = 2^k_j m_j, m_j in [1, 2): a multiply and
 * integer operations per weight, one (vector) log per block; 16 factors in [1, 2] stay below
 * 2^16. Used for sum log sigma and for the scale mixture's sum log1p(e) (1 + e in [1, 2]
 * directly; e below 2^-24 is lost there, under half an ulp of that weight's log p). A product of
 * 16 rounds 16 times (at worst 16 * 2^-24 relative: 1e-6 absolute in the log of 16 terms, below
 * the rounding of the float sums). tests/test_native.py checks the sums against float64. */
#define LANES 16
#define BLOCK 256 /* 16 rows */

/* the per-weight work of the forward pass for weight j (lane l): see forward_block */
#define FORWARD_WEIGHT                                                                        \
    float r = rho[j], y = exp_abs(r, L), sig = softplus_y(r, y), e = nz[j], m = mu[j];        \
    float wv = MADD(sig, e, m);                                                               \
    if (!direct) es[j] = e;                                                                   \
    ws[j] = wv;                                                                               \
    /* log sigma through the product (biased exponents: 127 per weight comes off per chunk);  \
     * below rho = -80 sigma is held at softplus(-80), whose log is -80: rho + 80 more makes   \
     * it rho, as log_softplus_f (between -80 and -20 log sigma is rho to float precision) */  \
    uint32_t bits = f2u(sig);                                                                 \
    pm[l] *= u2f((bits & 0x007fffffu) | 0x3f800000u);                                         \
    ke[l] += (int32_t)(bits >> 23);                                                           \
    s0[l] += minf(r - L.lo, 0.0f);                                                            \
    if (kind != CLOSED) s1[l] = MADD(e, e, s1[l]); /* the sums each estimator needs */        \
    else { s3[l] = MADD(sig, sig, s3[l]); s4[l] = MADD(m, m, s4[l]); }                        \
    if (kind == MIXTURE) {                                                                    \
        float pa, pb, d, ex = mixture_e(p, wv, &pa, &pb, &d, L);                              \
        s2[l] += maxf(pa, pb);                                                                \
        pu[l] *= 1.0f + ex;                                                                   \
        if (keep) dls[j] = mixture_grad(p, wv, d, ex);                                        \
    } else if (kind != CLOSED) {                                                              \
        s2[l] += logp_of(kind, p, wv, L);                                                     \
        if (keep) dls[j] = dlogp_of(kind, p, wv, L);                                          \
    }

/* weights [b, e_) (at most BLOCK) of the forward pass, noise nz[j]; adds to the lane sums
 * s0 .. s4: log sigma, eps^2, log p(w), sigma^2, mu^2 (the last two for the closed form only,
 * the two before for the Monte-Carlo KL only: each estimator's sums, the others stay 0).
 * keep: store dl (dls) for the backward pass. direct: the noise is already in es. */
INLINE void forward_block(int kind, int keep, int direct, int64_t b, int64_t e_,
                          const float *nz, const float *mu, const float *rho, float *ws,
                          float *es, float *dls, const float *pp, lims_t L,
                          float *s0_, float *s1_, float *s2_, float *s3_, float *s4_,
                          int32_t *ke_) {
    /* locals: the stores below cannot change them (else they are reloaded every iteration) */
    const float p[4] = {pp[0], pp[1], pp[2], pp[3]};
    float pm[LANES], pu[LANES], s0[LANES], s1[LANES], s2[LANES], s3[LANES], s4[LANES];
    int32_t ke[LANES];
    for (int l = 0; l < LANES; l++) {
        pm[l] = pu[l] = 1.0f;
        s0[l] = s0_[l]; s1[l] = s1_[l]; s2[l] = s2_[l]; s3[l] = s3_[l]; s4[l] = s4_[l];
        ke[l] = ke_[l];
    }
    int64_t rows = (e_ - b) / LANES, rem = (e_ - b) % LANES;
    for (int64_t q = 0; q < rows; q++) {
#pragma omp simd
        for (int l = 0; l < LANES; l++) {
            int64_t j = b + q * LANES + l;
            FORWARD_WEIGHT
        }
    }
    for (int l = 0; l < rem; l++) { /* the last, partial row */
        int64_t j = b + rows * LANES + l;
        FORWARD_WEIGHT
    }
#pragma omp simd
    for (int l = 0; l < LANES; l++) {
        /* log_in reads a NaN's bits as a number: x - x (0, or NaN) carries a NaN product on */
        s0[l] += log_in(pm[l]) + (pm[l] - pm[l]);
        if (kind == MIXTURE) s2[l] += log_in(pu[l]) + (pu[l] - pu[l]);
    }
    for (int l = 0; l < LANES; l++) {
        s0_[l] = s0[l]; s1_[l] = s1[l]; s2_[l] = s2[l]; s3_[l] = s3[l]; s4_[l] = s4[l];
        ke_[l] = ke[l];
    }
}

INLINE void forward_chunk(int kind, int keep, int64_t lo, int64_t hi, int64_t n, int64_t s,
                          const float *mu, const float *rho, float *w, float *eps, keys_t k,
                          const float *p, double *acc, float *dl, lims_t L) {
    float nb[BLOCK + 32];
    float s0[LANES], s1[LANES], s2[LANES], s3[LANES], s4[LANES];
    int32_t ke[LANES];
    for (int l = 0; l < LANES; l++) { s0[l] = s1[l] = s2[l] = s3[l] = s4[l] = 0.0f; ke[l] = 0; }
    float *ws = w + s * n, *es = eps + s * n, *dls = keep && kind != CLOSED ? dl + s * n : 0;
    for (int64_t b = lo; b < hi; b += BLOCK) {
        int64_t e_ = b + BLOCK < hi ? b + BLOCK : hi;
        uint64_t g0 = (uint64_t)(s * n + b);
        int64_t off = (int64_t)(g0 & 31u), ng = (off + (e_ - b) + 31) / 32;
        if (off == 0 && (e_ - b) % 32 == 0) { /* whole groups: the noise goes to eps directly */
            noise_groups(k, (uint32_t)(g0 >> 5), ng, es + b);
            forward_block(kind, keep, 1, b, e_, es, mu, rho, ws, NULL, dls, p, L,
                          s0, s1, s2, s3, s4, ke);
        } else {
            noise_groups(k, (uint32_t)(g0 >> 5), ng, nb);
            forward_block(kind, keep, 0, b, e_, nb + off - b, mu, rho, ws, es, dls, p, L,
                          s0, s1, s2, s3, s4, ke);
        }
    }
    for (int l = 0; l < LANES; l++) {
        acc[0] += (double)s0[l] + 0.6931471805599453 * (double)ke[l];
        if (l == 0) acc[0] -= 0.6931471805599453 * 127.0 * (double)(hi - lo);
        acc[1] += s1[l]; acc[2] += s2[l]; acc[3] += s3[l]; acc[4] += s4[l];
    }
}

#define FWD(KIND, KEEP) forward_chunk(KIND, KEEP, lo, hi, n, s, mu, rho, w, eps, k, p, acc, dl, L)
#define FORWARD_KINDS(KEEP)                        \
    switch (kind) {                                \
    case MIXTURE: FWD(MIXTURE, KEEP); break;       \
    case GAUSSIAN: FWD(GAUSSIAN, KEEP); break;     \
    case LAPLACE: FWD(LAPLACE, KEEP); break;       \
    case CAUCHY: FWD(CAUCHY, KEEP); break;         \
    default: FWD(CLOSED, KEEP); break;             \
    }

/* sums[0] = sum log sigma, sums[3] = sum sigma^2, sums[4] = sum mu^2 (one sample; the last two
 * for the closed form only); sums[1] = sum eps^2, sums[2] = sum log p(w) (all S samples;
 * Monte-Carlo KL only). Sums an estimator does not use stay 0.
 * dl: d log p(w) / dw for the backward pass (S * n, Monte-Carlo KL), or NULL */
void bbb_forward(int64_t n, int64_t S, const float *mu, const float *rho, float *w, float *eps,
                 uint64_t seed, int kind, const float *p, double *sums, float *dl, int threads) {
    keys_t k = make_keys(seed);
    int keep = dl != NULL;
    lims_t L = make_lims();
    int64_t nchunks = (n + CHUNK - 1) / CHUNK;
    for (int i = 0; i < 5; i++) sums[i] = 0.0;
    for (int64_t s = 0; s < S; s++) {
        double t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;
#pragma omp parallel num_threads(threads)
        {
            FTZ_ENTER
#pragma omp for schedule(static) reduction(+ : t0, t1, t2, t3, t4)
            for (int64_t c = 0; c < nchunks; c++) {
                int64_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
                double acc[5] = {0, 0, 0, 0, 0};
                if (!keep) { FORWARD_KINDS(0) }
                else { FORWARD_KINDS(1) }
                t0 += acc[0]; t1 += acc[1]; t2 += acc[2]; t3 += acc[3]; t4 += acc[4];
            }
            FTZ_LEAVE
        }
        if (s == 0) { sums[0] = t0; sums[3] = t3; sums[4] = t4; }
        sums[1] += t1;
        sums[2] += t2;
    }
}

/* weights [lo, hi) of sample s in the backward pass: accumulate d loss/dw into gmu and
 * d loss/dw * eps into grho; on the last sample apply d sigma / d rho and add the KL's direct
 * terms, with sigma, sigmoid(rho) and sigmoid(rho) / sigma recomputed from rho (exactly as the
 * forward pass computed sigma: the same inline functions) */
INLINE void backward_chunk(int closed, int first, int last, int has_gw, int64_t lo, int64_t hi,
                           int64_t n,
                           int64_t S, int64_t s, const float *mu, const float *rho,
                           const float *eps, const float *grad_w, float grad_kl, const float *dl,
                           float inv_s2, float *gmu, float *grho, lims_t L) {
    const float c = -grad_kl / (float)S;
#pragma omp simd
    for (int64_t j = lo; j < hi; j++) {
        float e = eps[s * n + j];
        float g = has_gw ? grad_w[s * n + j] : 0.0f; /* a constant: no branch in the loop */
        if (!closed) g += c * dl[s * n + j];
        float acc_mu = first ? g : gmu[j] + g;
        float acc_sig = first ? g * e : grho[j] + g * e;
        if (last) {
            float r = rho[j], y = exp_abs(r, L), sig = softplus_y(r, y), sg, ratio;
            rho_derivs(rho_code(r, y), sig, L, &sg, &ratio);
            if (!closed) {  /* d(-log sigma)/d rho = -sigmoid(rho) / sigma */
                acc_sig = acc_sig * sg - grad_kl * ratio;
            } else { /* d KL/d mu = mu / s^2, d KL/d sigma = sigma / s^2 - 1 / sigma */
                acc_mu += grad_kl * mu[j] * inv_s2;
                acc_sig = (acc_sig + grad_kl * sig * inv_s2) * sg - grad_kl * ratio;
            }
        }
        gmu[j] = acc_mu;
        grho[j] = acc_sig;
    }
}

#define BWD(CLOSED_, FIRST, LAST, GW)                                                          \
    backward_chunk(CLOSED_, FIRST, LAST, GW, lo, hi, n, S, s, mu, rho, eps, grad_w, grad_kl,   \
                   dl, inv_s2, gmu, grho, L)
#define BACKWARD_KINDS(FIRST, LAST)                                       \
    if (kind == CLOSED) {                                                 \
        if (grad_w) { BWD(1, FIRST, LAST, 1); } else { BWD(1, FIRST, LAST, 0); } \
    } else {                                                              \
        if (grad_w) { BWD(0, FIRST, LAST, 1); } else { BWD(0, FIRST, LAST, 0); } \
    }

/* grad_w may be NULL (the sampled weights were not used by the loss); mu, rho: as bbb_forward
 * saw them; dl: what it kept (Monte-Carlo KL; unused by the closed form) */
void bbb_backward(int64_t n, int64_t S, const float *mu, const float *rho, const float *eps,
                  const float *grad_w, float grad_kl, int kind, const float *dl, float inv_s2,
                  float *gmu, float *grho, int threads) {
    lims_t L = make_lims();
    int64_t nchunks = (n + CHUNK - 1) / CHUNK;
    for (int64_t s = 0; s < S; s++) {
        int first = s == 0, last = s == S - 1;
#pragma omp parallel num_threads(threads)
        {
            FTZ_ENTER
#pragma omp for schedule(static)
            for (int64_t c = 0; c < nchunks; c++) {
                int64_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
                if (first && last) { BACKWARD_KINDS(1, 1) }
                else if (first) { BACKWARD_KINDS(1, 0) }
                else if (last) { BACKWARD_KINDS(0, 1) }
                else { BACKWARD_KINDS(0, 0) }
            }
            FTZ_LEAVE
        }
    }
}

/* elementwise math for the tests (tests/test_native.py): which = 0 exp_in, 1 log_in,
 * 2 log1p_01, 3 cos and 4 sin of 2 pi b / 2^24 (x holds b), 5 softplus, 6 sigmoid,
 * 7 sigmoid / softplus, 8 log softplus, 9 MADD(x, y, z) (the forward pass's w = sigma * eps + mu);
 * vector = 0: one element at a time, in a loop the compiler may not vectorise */
#define MATH_BODY                                                                             \
    float v = x[i], r;                                                                        \
    switch (which) {                                                                          \
    case 0: r = exp_in(v); break;                                                             \
    case 1: r = log_in(v); break;                                                             \
    case 2: r = log1p_01(v); break;                                                           \
    case 3: case 4: {                                                                         \
        float cs, sn;                                                                         \
        sincos_turn((uint32_t)v, &cs, &sn);                                                   \
        r = which == 3 ? cs : sn;                                                             \
        break;                                                                                \
    }                                                                                         \
    case 5: r = softplus_f(v, L); break;                                                      \
    case 6: case 7: {                                                                         \
        float ya = exp_abs(v, L), sg, ra;                                                     \
        rho_derivs(rho_code(v, ya), softplus_y(v, ya), L, &sg, &ra);                          \
        r = which == 6 ? sg : ra;                                                             \
        break;                                                                                \
    }                                                                                         \
    case 8: r = log_softplus_f(v, softplus_f(v, L)); break;                                  \
    default: r = MADD(v, y[i], z[i]); break;                                                  \
    }                                                                                         \
    out[i] = r;

__attribute__((optimize("no-tree-vectorize"), noinline))
static void math_scalar(int which, int64_t n, const float *x, const float *y, const float *z,
                        float *out, lims_t L) {
    for (int64_t i = 0; i < n; i++) {
        __asm__ volatile("" ::: "memory"); /* one element at a time */
        MATH_BODY
    }
}

void bbb_math(int which, int64_t n, const float *x, const float *y, const float *z, float *out,
              int vector) {
    FTZ_ENTER
    lims_t L = make_lims();
    if (!vector) {
        math_scalar(which, n, x, y, z, out, L);
    } else {
        switch (which) { /* one vector loop per function */
#define VLOOP(W)                                                                              \
    case W: {                                                                                 \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++) {                                 \
            int which = W;                                                                    \
            MATH_BODY                                                                         \
        }                                                                                     \
        break;                                                                                \
    }
        VLOOP(0) VLOOP(1) VLOOP(2) VLOOP(3) VLOOP(4) VLOOP(5) VLOOP(6) VLOOP(7) VLOOP(8) VLOOP(9)
#undef VLOOP
        }
    }
    FTZ_LEAVE
}

/* ---- Bandit kernels (helpers/bandit.py). The Bayesian agents' mu, rho and eps are flat arrays
 * whose consecutive pieces of len[s] entries live in a larger parameter store at off[s]
 * (the Bayesian rows of each layer's weight tensor, all agents stacked). ---- */

/* w = mu + sigma * eps with fresh noise, written into the store; eps (2 * ceil(n / 2) entries,
 * n = sum len) is kept for the backward pass */
void bbb_sample_seg(int nseg, const int64_t *len, const int64_t *off, float *store,
                    const float *mu, const float *sigma, float *eps, uint64_t seed, int threads) {
    keys_t k = make_keys(seed);
    int64_t n = 0;
    for (int s = 0; s < nseg; s++) n += len[s];
    int64_t half = (n + 1) / 2;
#pragma omp parallel num_threads(threads)
    {
        FTZ_ENTER
#pragma omp for simd schedule(static)
        for (int64_t i = 0; i < half; i++) {
            float e0, e1;
            noise_pair(k, (uint32_t)i, &e0, &e1);
            eps[i] = e0;
            eps[half + i] = e1;
        }
        int64_t start = 0;
        for (int s = 0; s < nseg; s++) {
            float *out = store + off[s];
            const float *m = mu + start, *sg = sigma + start, *e = eps + start;
#pragma omp for simd schedule(static) nowait
            for (int64_t j = 0; j < len[s]; j++) out[j] = m[j] + sg[j] * e[j];
            start += len[s];
        }
        FTZ_LEAVE
    }
}

/* one Adam step (torch.optim.Adam's formula); h = {lr / bias_correction1, beta1, beta2, eps,
 * 1 / sqrt(bias_correction2)} */
INLINE void adam_one(float *p, float *m, float *v, float g, const float *h) {
    float mm = h[1] * *m + (1.0f - h[1]) * g;
    float vv = h[2] * *v + (1.0f - h[2]) * g * g;
    *m = mm;
    *v = vv;
    *p -= h[0] * mm / (sqrtf(vv) * h[4] + h[3]);
}

/* the gradient of (data loss + kl_scale * Monte-Carlo KL) wrt mu and rho of one weight:
 * g_in = d data loss / d w, e its noise; the same formulas as bbb_backward */
INLINE void bandit_grad(int kind, const float *p, float g_in, float mu, float rho, float sig,
                        float e, float kl_scale, float *g_mu, float *g_rho, lims_t L) {
    float dl = dlogp_of(kind, p, mu + sig * e, L), sg, ratio;
    rho_derivs(rho_code(rho, exp_abs(rho, L)), sig, L, &sg, &ratio);
    float g = g_in - kl_scale * dl;
    *g_mu = g;
    *g_rho = g * e * sg - kl_scale * ratio;
}

/* gradient of (data loss + kl_scale * Monte-Carlo KL) wrt mu and rho, then Adam on both and
 * sigma = softplus(rho) refreshed (sigma holds it on entry too).
 * grad: d data loss / d w in the store's layout; st: Adam moments m_mu, v_mu, m_rho, v_rho
 * (each n_total entries) */
INLINE void bandit_bwd_range(int kind, int64_t lo, int64_t hi, int64_t start, const float *g_in,
                             float *mu, float *rho, float *sigma, const float *eps,
                             float kl_scale, const float *p, float *st, int64_t n_total,
                             const float *h, lims_t L) {
#pragma omp simd
    for (int64_t j = lo; j < hi; j++) {
        int64_t f = start + j;
        float g, gr;
        bandit_grad(kind, p, g_in[j], mu[f], rho[f], sigma[f], eps[f], kl_scale, &g, &gr, L);
        adam_one(&mu[f], &st[f], &st[n_total + f], g, h);
        adam_one(&rho[f], &st[2 * n_total + f], &st[3 * n_total + f], gr, h);
        sigma[f] = softplus_f(rho[f], L);
    }
}

void bbb_backward_adam_seg(int nseg, const int64_t *len, const int64_t *off, const float *grad,
                           float *mu, float *rho, float *sigma, const float *eps, float kl_scale, int kind,
                           const float *p, float *st, int64_t n_total, const float *h,
                           int threads) {
    lims_t L = make_lims();
#pragma omp parallel num_threads(threads)
    {
        FTZ_ENTER
        int64_t start = 0;
        for (int s = 0; s < nseg; s++) {
            int64_t n = len[s];
            const float *g_in = grad + off[s];
            int nt = omp_get_num_threads(), id = omp_get_thread_num();
            int64_t per = (n + nt - 1) / nt, lo = id * per, hi = lo + per < n ? lo + per : n;
            if (lo < hi) {
                switch (kind) {
                case MIXTURE: bandit_bwd_range(MIXTURE, lo, hi, start, g_in, mu, rho, sigma, eps, kl_scale, p, st, n_total, h, L); break;
                case GAUSSIAN: bandit_bwd_range(GAUSSIAN, lo, hi, start, g_in, mu, rho, sigma, eps, kl_scale, p, st, n_total, h, L); break;
                case LAPLACE: bandit_bwd_range(LAPLACE, lo, hi, start, g_in, mu, rho, sigma, eps, kl_scale, p, st, n_total, h, L); break;
                default: bandit_bwd_range(CAUCHY, lo, hi, start, g_in, mu, rho, sigma, eps, kl_scale, p, st, n_total, h, L); break;
                }
            }
            start += n;
        }
        FTZ_LEAVE
    }
}

/* Adam on the pieces [off[s], off[s] + len[s]) of param, with grad, m and v in the same layout */
void bbb_adam_seg(int nseg, const int64_t *len, const int64_t *off, float *param,
                  const float *grad, float *m, float *v, const float *h, int threads) {
#pragma omp parallel num_threads(threads)
    {
        FTZ_ENTER
        for (int s = 0; s < nseg; s++) {
            int64_t o = off[s];
#pragma omp for simd schedule(static) nowait
            for (int64_t j = o; j < o + len[s]; j++) adam_one(&param[j], &m[j], &v[j], grad[j], h);
        }
        FTZ_LEAVE
    }
}

/* the floating-point mode bits (MXCSR: FTZ 0x8000, DAZ 0x0040) of every thread of a parallel
 * region of ``threads`` threads, written to out[0..threads) (tests check nothing leaks);
 * returns 0 where the CPU has no such register */
int bbb_fp_mode(int threads, unsigned int *out) {
#if defined(__SSE__)
#pragma omp parallel num_threads(threads)
    out[omp_get_thread_num()] = _mm_getcsr() & 0x8040u;
    return 1;
#else
    (void)threads;
    (void)out;
    return 0;
#endif
}
