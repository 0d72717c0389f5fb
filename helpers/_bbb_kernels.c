/* Fused per-weight kernels of Bayes by Backprop (CPU, float32, OpenMP + SIMD).
 *
 * For every weight j and Monte-Carlo sample s, one pass computes
 *   eps = N(0,1) noise from a counter-based generator (seed, s * n + j),
 *   sigma = softplus(rho), w = mu + sigma * eps, and the sums that make up the KL.
 * When a backward pass will follow, the same pass also stores what the gradient needs and it has
 * just computed: d log p(w) / dw per sample, sigmoid(rho) and sigmoid(rho) / softplus(rho) per
 * weight (sigma itself for the closed-form KL). The backward pass then only streams memory (no
 * exp, log or division; profiled in benchmarks/profile_step.py) and applies
 *   d loss / d w = grad_w - grad_kl / S * d log p(w) / dw,
 *   grad_mu = sum_s d loss/dw,
 *   grad_rho = sum_s d loss/dw * eps * sigmoid(rho) - grad_kl * sigmoid(rho) / softplus(rho)
 * (Monte-Carlo KL: log q contributes -sum log sigma only), or the closed-form KL terms. The last
 * ratio is computed so that it stays finite (-> 1) for very negative rho, where sigma underflows.
 * The stored values are the very numbers the forward pass used, so the gradient is taken at
 * exactly the sampled weights (recomputing them in the backward pass, as before, could differ in
 * the last bit where a loop's vector and scalar remainders round a math function differently).
 *
 * Numerics: compiled WITHOUT -ffast-math (helpers/native.py): no reassociation, no reciprocal
 * rewrites, IEEE inf/NaN. Sums over weights are the OpenMP simd reductions the code asks for.
 * The vector exp/log/cos come from glibc's libmvec, declared below (glibc declares them only
 * under -ffast-math). Every parallel region flushes subnormals to zero (FTZ + DAZ) in its own
 * threads and restores each thread's previous mode before it returns: no floating-point mode
 * leaks into the caller's process.
 */
#include <math.h>
#include <stdint.h>
#include <omp.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#if defined(BBB_MVEC) && defined(__x86_64__) && !defined(__FAST_MATH__)
__attribute__((__simd__("notinbranch"))) float expf(float);
__attribute__((__simd__("notinbranch"))) float logf(float);
__attribute__((__simd__("notinbranch"))) float log1pf(float);
__attribute__((__simd__("notinbranch"))) float cosf(float);
#endif

/* flush subnormals in this thread for the span of a parallel region, then restore its mode */
#if defined(__SSE__)
#define FTZ_ENTER unsigned int bbb_csr_ = _mm_getcsr(); _mm_setcsr(bbb_csr_ | 0x8040u);
#define FTZ_LEAVE _mm_setcsr(bbb_csr_);
#else
#define FTZ_ENTER
#define FTZ_LEAVE
#endif

#define CHUNK 4096
#define CLOSED (-1)
#define GAUSSIAN 0
#define MIXTURE 1
#define LAPLACE 2
#define CAUCHY 3
#define INLINE static inline __attribute__((always_inline))

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

/* two uniforms from (keys, index < 2^32): u1 in (0, 1], u2 in [0, 1), 24 bits each */
INLINE void uniform_pair(keys_t k, uint32_t idx, float *u1, float *u2) {
    uint32_t h = mix32(idx ^ k.k0);
    uint32_t a = mix32(h + k.k2), b = mix32(h ^ k.k1);
    *u1 = ((float)(a >> 8) + 0.5f) * (1.0f / 16777216.0f);
    *u2 = (float)(b >> 8) * (1.0f / 16777216.0f);
}

/* standard normal from (keys, index): Box-Muller, cosine branch */
INLINE float noise_at(keys_t k, uint32_t idx) {
    float u1, u2;
    uniform_pair(k, idx, &u1, &u2);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853071795864f * u2);
}

INLINE float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* Clamp bounds, hidden from the optimiser: with literal bounds GCC rewrites exp(clamp(x)) into a
 * select between exp(bound) and exp(x), so the vector exp runs on the unclamped argument and
 * falls back to scalar code for every |x| > 87 (3x slower kernels). Read once per kernel. */
typedef struct { float lo, hi, dmax; } lims_t;

static lims_t make_lims(void) {
    lims_t L = {-80.0f, 20.0f, 80.0f};
    __asm__("" : "+m"(L));
    return L;
}

/* e^x on the range where softplus and sigmoid need it (below -80 sigma stays at softplus(-80),
 * about 1.8e-35; the clamp also keeps the vector exp off its slow path for underflow) */
INLINE float exp_rho(float x, lims_t L) { return expf(clampf(x, L.lo, L.hi)); }

/* softplus(x) from t = exp_rho(x) */
INLINE float softplus_t(float x, float t) { return x > 20.0f ? x : log1pf(t); }

INLINE float softplus_f(float x, lims_t L) { return softplus_t(x, exp_rho(x, L)); }

/* log softplus(x): = x to float precision below -20 (softplus(x) = e^x (1 - e^x / 2 + ...)) */
INLINE float log_softplus_f(float x, float sp) { return x < -20.0f ? x : logf(sp); }

/* d sigma / d rho = sigmoid(x) and sigmoid(x) / softplus(x) from t = exp_rho(x) and sp =
 * softplus(x); the ratio stays finite for every x: both are ~e^x below -20, where it is
 * 1 - e^x / 2 to float precision */
INLINE void rho_derivs(float x, float t, float sp, float *sg, float *ratio) {
    float s = t / (1.0f + t);
    *sg = s;
    *ratio = x < -20.0f ? 1.0f - 0.5f * t : s / sp;
}

/* log p(w) and d log p / dw; p holds the prior's constants (see native.prior_constants) */
INLINE float logp_grad(int kind, const float *p, float w, float *grad, lims_t L) {
    if (kind == MIXTURE) { /* p: ka, kb, ca, cb with k = 1/(2 sigma^2), c = log weight - log sigma - log sqrt(2 pi) */
        float w2 = w * w;
        float a = p[2] - p[0] * w2, b = p[3] - p[1] * w2;
        float d = clampf(a - b, -L.dmax, L.dmax);
        /* responsibilities of the wide (r) and narrow (q) components, each computed directly
         * (never as 1 - the other), so the gradient -2 w (ka r + kb q) is a sum of two positive
         * terms: no cancellation whatever sigma2 */
        float e = expf(-fabsf(d));
        float big = 1.0f / (1.0f + e), small = e * big;
        float r = d >= 0.0f ? big : small, q = d >= 0.0f ? small : big;
        *grad = -2.0f * w * (p[0] * r + p[1] * q);
        return (a > b ? a : b) + log1pf(e);
    } else if (kind == GAUSSIAN) { /* p: 1/sigma^2, -log sigma - log sqrt(2 pi) */
        *grad = -w * p[0];
        return p[1] - 0.5f * p[0] * w * w;
    } else if (kind == LAPLACE) { /* p: 1/b, -log(2 b) */
        *grad = w > 0.0f ? -p[0] : (w < 0.0f ? p[0] : 0.0f);
        return p[1] - fabsf(w) * p[0];
    } else { /* Cauchy, p: 1/gamma^2, -log(pi gamma) */
        float t = w * w * p[0];
        *grad = -2.0f * w * p[0] / (1.0f + t);
        return p[1] - log1pf(t);
    }
}

void bbb_normal(int64_t total, uint64_t seed, float *out, int threads) {
    keys_t k = make_keys(seed);
#pragma omp parallel num_threads(threads)
    {
        FTZ_ENTER
#pragma omp for simd schedule(static)
        for (int64_t i = 0; i < total; i++) out[i] = noise_at(k, (uint32_t)i);
        FTZ_LEAVE
    }
}

/* what the forward pass keeps for the backward pass (all NULL: nothing, no backward follows):
 * dl = d log p(w) / dw (S * n; the closed-form KL keeps sigma there, n entries), sg = sigmoid(rho),
 * ratio = sigmoid(rho) / softplus(rho) (n each) */
typedef struct { float *dl, *sg, *ratio; } keep_t;

/* weights [lo, hi) of sample s in the forward pass; adds to a[0..4]:
 * sum log sigma, sum eps^2, sum log p(w), sum sigma^2, sum mu^2.
 * keep: 0 nothing, 1 dl of this sample, 2 dl and the per-weight sg, ratio (first sample).
 * The work runs in blocks of BLOCK weights, each in three loops (noise; sigma and its
 * derivatives; w and the prior): every vector exp / log / cos is a call that clobbers all vector
 * registers, so one loop with all of them spills its live values around each call; three short
 * loops over L1-resident blocks are 15 % faster (benchmarks/profile_step.py) and compute every
 * stored value with the same operations (only the order in which the five sums add up differs). */
#define BLOCK 256
INLINE void forward_chunk(int kind, int keep, int64_t lo, int64_t hi, int64_t n, int64_t s,
                          const float *mu, const float *rho, float *w, float *eps, keys_t k,
                          const float *p, double *acc, keep_t K, lims_t L) {
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0;
    float sigb[BLOCK];
    float *ws = w + s * n, *es = eps + s * n, *dls = keep && kind != CLOSED ? K.dl + s * n : 0;
    for (int64_t b = lo; b < hi; b += BLOCK) {
        int64_t e_ = b + BLOCK < hi ? b + BLOCK : hi;
#pragma omp simd reduction(+ : a1)
        for (int64_t j = b; j < e_; j++) {
            float e = noise_at(k, (uint32_t)(s * n + j));
            es[j] = e;
            a1 += e * e;
        }
#pragma omp simd reduction(+ : a0, a3)
        for (int64_t j = b; j < e_; j++) {
            float r = rho[j], t = exp_rho(r, L), sig = softplus_t(r, t);
            sigb[j - b] = sig;
            a0 += log_softplus_f(r, sig);
            a3 += sig * sig;
            if (keep == 2) {
                float sg, ratio;
                rho_derivs(r, t, sig, &sg, &ratio);
                K.sg[j] = sg;
                K.ratio[j] = ratio;
                if (kind == CLOSED) K.dl[j] = sig;
            }
        }
#pragma omp simd reduction(+ : a2, a4)
        for (int64_t j = b; j < e_; j++) {
            float m = mu[j], wv = m + sigb[j - b] * es[j], g;
            ws[j] = wv;
            a4 += m * m;
            if (kind != CLOSED) {
                a2 += logp_grad(kind, p, wv, &g, L);
                if (keep) dls[j] = g;
            }
        }
    }
    acc[0] += a0; acc[1] += a1; acc[2] += a2; acc[3] += a3; acc[4] += a4;
}

#define FWD(KIND, KEEP) forward_chunk(KIND, KEEP, lo, hi, n, s, mu, rho, w, eps, k, p, acc, K, L)
#define FORWARD_KINDS(KEEP)                        \
    switch (kind) {                                \
    case MIXTURE: FWD(MIXTURE, KEEP); break;       \
    case GAUSSIAN: FWD(GAUSSIAN, KEEP); break;     \
    case LAPLACE: FWD(LAPLACE, KEEP); break;       \
    case CAUCHY: FWD(CAUCHY, KEEP); break;         \
    default: FWD(CLOSED, KEEP); break;             \
    }

/* sums[0] = sum log sigma, sums[3] = sum sigma^2, sums[4] = sum mu^2 (one sample);
 * sums[1] = sum eps^2, sums[2] = sum log p(w) (all S samples).
 * dl, sg, ratio: what the backward pass needs (see keep_t), or all NULL */
void bbb_forward(int64_t n, int64_t S, const float *mu, const float *rho, float *w, float *eps,
                 uint64_t seed, int kind, const float *p, double *sums, float *dl, float *sg,
                 float *ratio, int threads) {
    keys_t k = make_keys(seed);
    keep_t K = {dl, sg, ratio};
    int keep = dl != NULL && sg != NULL && ratio != NULL;
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
                else if (s == 0) { FORWARD_KINDS(2) }
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
 * terms. Reads only what the forward pass kept (keep_t): no transcendental function here. */
INLINE void backward_chunk(int closed, int first, int last, int64_t lo, int64_t hi, int64_t n,
                           int64_t S, int64_t s, const float *mu, const float *eps,
                           const float *grad_w, float grad_kl, keep_t K, float inv_s2,
                           float *gmu, float *grho) {
    const float c = -grad_kl / (float)S;
#pragma omp simd
    for (int64_t j = lo; j < hi; j++) {
        float e = eps[s * n + j];
        float g = grad_w ? grad_w[s * n + j] : 0.0f;
        if (!closed) g += c * K.dl[s * n + j];
        float acc_mu = first ? g : gmu[j] + g;
        float acc_sig = first ? g * e : grho[j] + g * e;
        if (last) {
            float sg = K.sg[j], ratio = K.ratio[j];
            if (!closed) {  /* d(-log sigma)/d rho = -sigmoid(rho) / sigma */
                acc_sig = acc_sig * sg - grad_kl * ratio;
            } else { /* d KL/d mu = mu / s^2, d KL/d sigma = sigma / s^2 - 1 / sigma */
                acc_mu += grad_kl * mu[j] * inv_s2;
                acc_sig = (acc_sig + grad_kl * K.dl[j] * inv_s2) * sg - grad_kl * ratio;
            }
        }
        gmu[j] = acc_mu;
        grho[j] = acc_sig;
    }
}

#define BWD(CLOSED_, FIRST, LAST)                                                           \
    backward_chunk(CLOSED_, FIRST, LAST, lo, hi, n, S, s, mu, eps, grad_w, grad_kl, K, inv_s2, \
                   gmu, grho)
#define BACKWARD_KINDS(FIRST, LAST)                    \
    if (kind == CLOSED) { BWD(1, FIRST, LAST); }       \
    else { BWD(0, FIRST, LAST); }

/* grad_w may be NULL (the sampled weights were not used by the loss); dl, sg, ratio: what
 * bbb_forward kept (keep_t) */
void bbb_backward(int64_t n, int64_t S, const float *mu, const float *eps, const float *grad_w,
                  float grad_kl, int kind, const float *dl, const float *sg, const float *ratio,
                  float inv_s2, float *gmu, float *grho, int threads) {
    keep_t K = {(float *)dl, (float *)sg, (float *)ratio};
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

/* ---- Bandit kernels (helpers/bandit.py). The Bayesian agents' mu, rho and eps are flat arrays
 * whose consecutive pieces of len[s] entries live in a larger parameter store at off[s]
 * (the Bayesian rows of each layer's weight tensor, all agents stacked). ---- */

/* standard normal pair from (keys, index): Box-Muller, both the cosine and the sine branch */
INLINE void noise_pair(keys_t k, uint32_t idx, float *e0, float *e1) {
    float u1, u2;
    uniform_pair(k, idx, &u1, &u2);
    float r = sqrtf(-2.0f * logf(u1)), t = 6.2831853071795864f * u2;
    *e0 = r * cosf(t);
    *e1 = r * cosf(t - 1.5707963267948966f); /* sin t; a cos keeps the loop vectorised */
}

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
    float dl, sg, ratio;
    logp_grad(kind, p, mu + sig * e, &dl, L);
    rho_derivs(rho, exp_rho(rho, L), sig, &sg, &ratio);
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
