/* Fused per-weight kernels of Bayes by Backprop (CPU, float32, OpenMP + SIMD).
 *
 * For every weight j and Monte-Carlo sample s, one pass computes
 *   eps = N(0,1) noise from a counter-based generator (seed, s * n + j),
 *   sigma = softplus(rho), w = mu + sigma * eps, and the sums that make up the KL.
 * The backward pass reads eps back (storing it is cheaper than regenerating it) and applies
 *   d loss / d w = grad_w - grad_kl / S * d log p(w) / dw,
 *   grad_mu = sum_s d loss/dw,  grad_rho = (sum_s d loss/dw * eps - grad_kl / sigma) * sigmoid(rho)
 * (Monte-Carlo KL: log q contributes -sum log sigma only), or the closed-form KL terms.
 * Loops are split per prior kind so that the compiler vectorises them (glibc's libmvec supplies
 * vector exp/log/cos). Compiled at run time by helpers/native.py.
 */
#include <math.h>
#include <stdint.h>
#include <omp.h>

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

INLINE float softplus_f(float x) { return x > 20.0f ? x : log1pf(expf(fminf(x, 20.0f))); }

INLINE float sigmoid_f(float x) { return 1.0f / (1.0f + expf(-fminf(fmaxf(x, -80.0f), 80.0f))); }

/* log p(w) and d log p / dw; p holds the prior's constants (see native.prior_constants) */
INLINE float logp_grad(int kind, const float *p, float w, float *grad) {
    if (kind == MIXTURE) { /* p: ka, kb, ca, cb with k = 1/(2 sigma^2), c = log weight - log sigma - log sqrt(2 pi) */
        float w2 = w * w;
        float a = p[2] - p[0] * w2, b = p[3] - p[1] * w2;
        float d = fminf(fmaxf(a - b, -80.0f), 80.0f);
        float r = 1.0f / (1.0f + expf(-d));
        *grad = -2.0f * w * (p[0] * r + p[1] * (1.0f - r));
        return fmaxf(a, b) + log1pf(expf(-fabsf(d)));
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
#pragma omp parallel for simd num_threads(threads) schedule(static)
    for (int64_t i = 0; i < total; i++) out[i] = noise_at(k, (uint32_t)i);
}

/* weights [lo, hi) of sample s in the forward pass; adds to a[0..4]:
 * sum log sigma, sum eps^2, sum log p(w), sum sigma^2, sum mu^2 */
INLINE void forward_chunk(int kind, int64_t lo, int64_t hi, int64_t n, int64_t s, const float *mu,
                          const float *rho, float *w, float *eps, keys_t k, const float *p,
                          double *acc) {
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0;
#pragma omp simd reduction(+ : a0, a1, a2, a3, a4)
    for (int64_t j = lo; j < hi; j++) {
        float e = noise_at(k, (uint32_t)(s * n + j));
        float sig = softplus_f(rho[j]), m = mu[j];
        float wv = m + sig * e, g;
        w[s * n + j] = wv;
        eps[s * n + j] = e;
        a0 += logf(sig);
        a1 += e * e;
        a3 += sig * sig;
        a4 += m * m;
        if (kind != CLOSED) a2 += logp_grad(kind, p, wv, &g);
    }
    acc[0] += a0; acc[1] += a1; acc[2] += a2; acc[3] += a3; acc[4] += a4;
}

/* sums[0] = sum log sigma, sums[3] = sum sigma^2, sums[4] = sum mu^2 (one sample);
 * sums[1] = sum eps^2, sums[2] = sum log p(w) (all S samples) */
void bbb_forward(int64_t n, int64_t S, const float *mu, const float *rho, float *w, float *eps,
                 uint64_t seed, int kind, const float *p, double *sums, int threads) {
    keys_t k = make_keys(seed);
    int64_t nchunks = (n + CHUNK - 1) / CHUNK;
    for (int i = 0; i < 5; i++) sums[i] = 0.0;
    for (int64_t s = 0; s < S; s++) {
        double t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : t0, t1, t2, t3, t4)
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
            double acc[5] = {0, 0, 0, 0, 0};
            switch (kind) {
            case MIXTURE: forward_chunk(MIXTURE, lo, hi, n, s, mu, rho, w, eps, k, p, acc); break;
            case GAUSSIAN: forward_chunk(GAUSSIAN, lo, hi, n, s, mu, rho, w, eps, k, p, acc); break;
            case LAPLACE: forward_chunk(LAPLACE, lo, hi, n, s, mu, rho, w, eps, k, p, acc); break;
            case CAUCHY: forward_chunk(CAUCHY, lo, hi, n, s, mu, rho, w, eps, k, p, acc); break;
            default: forward_chunk(CLOSED, lo, hi, n, s, mu, rho, w, eps, k, p, acc); break;
            }
            t0 += acc[0]; t1 += acc[1]; t2 += acc[2]; t3 += acc[3]; t4 += acc[4];
        }
        if (s == 0) { sums[0] = t0; sums[3] = t3; sums[4] = t4; }
        sums[1] += t1;
        sums[2] += t2;
    }
}

/* weights [lo, hi) of sample s in the backward pass: accumulate d loss/dw into gmu and
 * d loss/dw * eps into grho; on the last sample add the KL's direct terms and d sigma / d rho */
INLINE void backward_chunk(int kind, int first, int last, int64_t lo, int64_t hi, int64_t n,
                           int64_t S, int64_t s, const float *mu, const float *rho,
                           const float *eps, const float *grad_w, float grad_kl, const float *p,
                           float inv_s2, float *gmu, float *grho) {
    const float c = -grad_kl / (float)S;
#pragma omp simd
    for (int64_t j = lo; j < hi; j++) {
        float r = rho[j], sig = softplus_f(r), m = mu[j];
        float e = eps[s * n + j];
        float g = grad_w ? grad_w[s * n + j] : 0.0f;
        if (kind != CLOSED) {
            float dl;
            logp_grad(kind, p, m + sig * e, &dl);
            g += c * dl;
        }
        float acc_mu = first ? g : gmu[j] + g;
        float acc_sig = first ? g * e : grho[j] + g * e;
        if (last) {
            if (kind != CLOSED) {
                acc_sig -= grad_kl / sig;
            } else { /* d KL/d mu = mu / s^2, d KL/d sigma = sigma / s^2 - 1 / sigma */
                acc_mu += grad_kl * m * inv_s2;
                acc_sig += grad_kl * (sig * inv_s2 - 1.0f / sig);
            }
            acc_sig *= sigmoid_f(r);
        }
        gmu[j] = acc_mu;
        grho[j] = acc_sig;
    }
}

#define BWD(KIND, FIRST, LAST)                                                                  \
    backward_chunk(KIND, FIRST, LAST, lo, hi, n, S, s, mu, rho, eps, grad_w, grad_kl, p, inv_s2, \
                   gmu, grho)
#define BACKWARD_KINDS(FIRST, LAST)                               \
    switch (kind) {                                               \
    case MIXTURE: BWD(MIXTURE, FIRST, LAST); break;               \
    case GAUSSIAN: BWD(GAUSSIAN, FIRST, LAST); break;             \
    case LAPLACE: BWD(LAPLACE, FIRST, LAST); break;               \
    case CAUCHY: BWD(CAUCHY, FIRST, LAST); break;                 \
    default: BWD(CLOSED, FIRST, LAST); break;                     \
    }

/* grad_w may be NULL (the sampled weights were not used by the loss) */
void bbb_backward(int64_t n, int64_t S, const float *mu, const float *rho, const float *eps,
                  const float *grad_w, float grad_kl, int kind, const float *p, float inv_s2,
                  float *gmu, float *grho, int threads) {
    int64_t nchunks = (n + CHUNK - 1) / CHUNK;
    for (int64_t s = 0; s < S; s++) {
        int first = s == 0, last = s == S - 1;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
            if (first && last) { BACKWARD_KINDS(1, 1) }
            else if (first) { BACKWARD_KINDS(1, 0) }
            else if (last) { BACKWARD_KINDS(0, 1) }
            else { BACKWARD_KINDS(0, 0) }
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

/* gradient of (data loss + kl_scale * Monte-Carlo KL) wrt mu and rho, then Adam on both and
 * sigma = softplus(rho) refreshed (sigma holds it on entry too).
 * grad: d data loss / d w in the store's layout; st: Adam moments m_mu, v_mu, m_rho, v_rho
 * (each n_total entries) */
INLINE void bandit_bwd_range(int kind, int64_t lo, int64_t hi, int64_t start, const float *g_in,
                             float *mu, float *rho, float *sigma, const float *eps,
                             float kl_scale, const float *p, float *st, int64_t n_total,
                             const float *h) {
#pragma omp simd
    for (int64_t j = lo; j < hi; j++) {
        int64_t f = start + j;
        float sig = sigma[f], e = eps[f], dl;
        logp_grad(kind, p, mu[f] + sig * e, &dl);
        float g = g_in[j] - kl_scale * dl;
        /* d sigma / d rho = sigmoid(rho) = 1 - exp(-softplus(rho)) */
        float gr = (g * e - kl_scale / sig) * (-expm1f(-sig));
        adam_one(&mu[f], &st[f], &st[n_total + f], g, h);
        adam_one(&rho[f], &st[2 * n_total + f], &st[3 * n_total + f], gr, h);
        sigma[f] = softplus_f(rho[f]);
    }
}

void bbb_backward_adam_seg(int nseg, const int64_t *len, const int64_t *off, const float *grad,
                           float *mu, float *rho, float *sigma, const float *eps, float kl_scale, int kind,
                           const float *p, float *st, int64_t n_total, const float *h,
                           int threads) {
#pragma omp parallel num_threads(threads)
    {
        int64_t start = 0;
        for (int s = 0; s < nseg; s++) {
            int64_t n = len[s];
            const float *g_in = grad + off[s];
            int nt = omp_get_num_threads(), id = omp_get_thread_num();
            int64_t per = (n + nt - 1) / nt, lo = id * per, hi = lo + per < n ? lo + per : n;
            if (lo < hi) {
                switch (kind) {
                case MIXTURE: bandit_bwd_range(MIXTURE, lo, hi, start, g_in, mu, rho, sigma, eps, kl_scale, p, st, n_total, h); break;
                case GAUSSIAN: bandit_bwd_range(GAUSSIAN, lo, hi, start, g_in, mu, rho, sigma, eps, kl_scale, p, st, n_total, h); break;
                case LAPLACE: bandit_bwd_range(LAPLACE, lo, hi, start, g_in, mu, rho, sigma, eps, kl_scale, p, st, n_total, h); break;
                default: bandit_bwd_range(CAUCHY, lo, hi, start, g_in, mu, rho, sigma, eps, kl_scale, p, st, n_total, h); break;
                }
            }
            start += n;
        }
    }
}

/* Adam on the pieces [off[s], off[s] + len[s]) of param, with grad, m and v in the same layout */
void bbb_adam_seg(int nseg, const int64_t *len, const int64_t *off, float *param,
                  const float *grad, float *m, float *v, const float *h, int threads) {
#pragma omp parallel num_threads(threads)
    for (int s = 0; s < nseg; s++) {
        int64_t o = off[s];
#pragma omp for simd schedule(static) nowait
        for (int64_t j = o; j < o + len[s]; j++) adam_one(&param[j], &m[j], &v[j], grad[j], h);
    }
}

/* flush subnormal floats to zero (FTZ + DAZ) in every thread of the OpenMP pool, which torch's
 * own kernels share; returns 0 where the CPU has no such mode */
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
int bbb_flush_denormal(int on, int threads) {
#if defined(__SSE__)
#pragma omp parallel num_threads(threads)
    {
        unsigned int csr = _mm_getcsr();
        _mm_setcsr(on ? (csr | 0x8040u) : (csr & ~0x8040u));
    }
    return 1;
#else
    (void)on;
    (void)threads;
    return 0;
#endif
}
