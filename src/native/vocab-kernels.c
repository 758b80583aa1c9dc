/*
 * Ruffian's own native vocabulary kernels: the full-vocabulary passes of the decode loop's
 * statistics (src/decode/vocab-kernels.ts) with 8- or 16-wide float vectors and FMA, where the
 * WebAssembly kernels are 4-wide with none. Written with GCC/Clang vector extensions (no
 * intrinsics headers), so one source builds on any target: scripts/build-native.js compiles
 * it twice on x86-64 (AVX-512, AVX2 + FMA), once for the host elsewhere. No -ffast-math:
 * NaN and ±Infinity follow the rules below, which the WebAssembly kernels follow too.
 *
 * The exponential is Cody–Waite range reduction and a minimax polynomial (expv), on arguments
 * masked or clamped so that every lane stays finite.
 */
#include <stdint.h>
#include <string.h>

#define BLOCK 256
/* Tokens this many nats or more below their block's maximum (NaN and -Infinity too) weigh 0,
 * as in the WebAssembly blockStats kernel (simd-module.ts: FLOOR_NATS - 0.5). */
#define CUT_NATS 85.5f
/* A block whose maximum lies this many nats below the largest so far gets zero sums
 * (simd-module.ts: SKIP_NATS). */
#define SKIP_NATS 40.0f

/* The vector width: one register of the target, 16 floats with AVX-512, 8 with AVX, else 4
 * (SSE2, NEON). Wider vectors than the target's are split by the compiler, but their
 * comparisons are not: they become scalar code, 8× slower here. */
#if defined(__AVX512F__)
#define VW 16
#elif defined(__AVX__)
#define VW 8
#else
#define VW 4
#endif

typedef float vf __attribute__((vector_size(4 * VW)));
typedef int32_t vi __attribute__((vector_size(4 * VW)));
/* Unaligned views: WebAssembly memory and llama.cpp's buffers are only 4-byte aligned here. */
typedef float vf_u __attribute__((vector_size(4 * VW), aligned(4)));

static inline vf splat(float v) { return (vf){0} + v; }
static inline vf loadv(const float *p) { return *(const vf_u *)p; }
static inline void storev(float *p, vf v) { *(vf_u *)p = v; }
static inline vf andv(vf a, vi mask) { return (vf)((vi)a & mask); }

/* mask ? a : b, lane by lane (mask lanes are all ones or all zeros). */
static inline vf selectv(vi mask, vf a, vf b) { return (vf)((mask & (vi)a) | (~mask & (vi)b)); }

/* a > b ? a : b; a NaN in `a` loses, so NaN is never a maximum. */
static inline vf maxv(vf a, vf b) { return selectv(a > b, a, b); }

/* exp(d) for d in [−87, 88] (callers mask the rest): n = round(d·log2 e) by the
 * 1.5·2^23 rounding constant, whose low bits then hold n; b = d − n·ln 2 in two parts (Cody–
 * Waite: n·ln2_hi is exact); e^b − 1 by a degree-5 minimax polynomial (Estrin), and 2^n built
 * in the exponent bits: e^d = 2^n + 2^n·(e^b − 1). The scheme of ARM's optimized-routines
 * vector expf (llama.cpp's ggml_v_expf too), about 1.5 ulp. */
static inline vf expv(vf d) {
  const float shifter = 0x1.8p23f;
  vf z = d * 0x1.715476p+0f + shifter;
  vf n = z - shifter;
  vf b = (d - n * 0x1.62e4p-1f) - n * 0x1.7f7d1cp-20f;
  vf k = (vf)(((vi)z << 23) + 0x3f800000);
  vf u = b * b;
  vf j = ((0x1.0e4020p-7f * b + 0x1.573e2ep-5f) * u + (0x1.555e66p-3f * b + 0x1.fffdb6p-2f)) * u +
         0x1.ffffecp-1f * b;
  return j * k + k;
}

static inline float hmaxv(vf v) {
  float m = v[0];
  for (int i = 1; i < VW; i++) m = v[i] > m ? v[i] : m;
  return m;
}

/* Σ of the lanes in float64. */
static inline double hsumv(vf v) {
  double s[4] = {0, 0, 0, 0};
  for (int i = 0; i < VW; i++) s[i & 3] += v[i];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

/*
 * Block maxima and softmax statistics, with an optional copy: the `n` logits at `src` are
 * copied to `dst` block by block (none when src == dst), and each block of BLOCK floats at
 * `dst` is then read while it is in L1. `dst` holds `blocks`·BLOCK floats, the ones past n
 * already −Infinity (the caller's padding). For block b: its largest float (NaN ignored) to
 * maxima[b]; Σe to sums[2b] and Σe·d to sums[2b + 1] (float32 lanes, summed in float64), with
 * d = x − the block's maximum and e = exp(d); tokens CUT_NATS or more below it (NaN and
 * −Infinity too) weigh 0. A block whose maximum lies SKIP_NATS or more below the largest so
 * far, or that holds nothing finite, gets zero sums without an exponential. Returns the
 * largest float of all. The same outputs as the WebAssembly blockStats kernel.
 */
float ruffian_block_stats(const float *src, float *dst, int32_t n, int32_t blocks, float *maxima,
                          double *sums) {
  float all = -__builtin_inff();
  for (int32_t b = 0; b < blocks; b++) {
    float *x = dst + (size_t)b * BLOCK;
    const float *from = x;
    int32_t left = n - b * BLOCK;
    if (src != dst) {
      from = src + (size_t)b * BLOCK;
      /* The last block: the rest of dst is the padding. */
      if (left < BLOCK) {
        if (left > 0) memcpy(x, from, (size_t)left * 4);
        from = x;
      }
    }
    vf m0 = splat(-__builtin_inff()), m1 = m0, m2 = m0, m3 = m0;
    if (from != x) {
      /* Copied in the pass for the maximum: each vector is stored as it is compared. */
      for (int i = 0; i < BLOCK; i += 4 * VW) {
        vf a = loadv(from + i), c = loadv(from + i + VW);
        vf e = loadv(from + i + 2 * VW), f = loadv(from + i + 3 * VW);
        storev(x + i, a);
        storev(x + i + VW, c);
        storev(x + i + 2 * VW, e);
        storev(x + i + 3 * VW, f);
        m0 = maxv(a, m0);
        m1 = maxv(c, m1);
        m2 = maxv(e, m2);
        m3 = maxv(f, m3);
      }
    } else {
      for (int i = 0; i < BLOCK; i += 4 * VW) {
        m0 = maxv(loadv(x + i), m0);
        m1 = maxv(loadv(x + i + VW), m1);
        m2 = maxv(loadv(x + i + 2 * VW), m2);
        m3 = maxv(loadv(x + i + 3 * VW), m3);
      }
    }
    float m = hmaxv(maxv(maxv(m0, m1), maxv(m2, m3)));
    maxima[b] = m;
    if (m > all) all = m;
    double *out = sums + 2 * (size_t)b;
    if (!(m > all - SKIP_NATS)) {
      out[0] = 0;
      out[1] = 0;
      continue;
    }
    vf z0 = splat(0), z1 = z0, w0 = z0, w1 = z0;
    for (int i = 0; i < BLOCK; i += 2 * VW) {
      vf d0 = loadv(x + i) - m;
      vf d1 = loadv(x + i + VW) - m;
      /* Lanes CUT_NATS down, NaN and −Infinity: d is zeroed (a finite exponential) and the
       * weight masked to exactly 0 (so a one-hot has entropy 0). */
      vi k0 = d0 > -CUT_NATS;
      vi k1 = d1 > -CUT_NATS;
      d0 = andv(d0, k0);
      d1 = andv(d1, k1);
      vf e0 = andv(expv(d0), k0);
      vf e1 = andv(expv(d1), k1);
      z0 += e0;
      z1 += e1;
      w0 += e0 * d0;
      w1 += e1 * d1;
    }
    out[0] = hsumv(z0 + z1);
    out[1] = hsumv(w0 + w1);
  }
  return all;
}

/*
 * y[i] = exp(x[i] − shift) for i < n, returning Σy in float64 (summed in float32 lanes per
 * block of BLOCK, then in float64). NaN, −Infinity and anything 87 nats or more below the
 * shift give 0; more than 88 nats above it, +Infinity (e^88.73 overflows float32). The contract
 * of ggml's ggml_vec_soft_max_f32, except that NaN weighs 0 (the WebAssembly kernels' rule).
 */
static inline vf softv(vf x, float shift) {
  vf d = x - shift;
  vi keep = d > -87.0f;
  vi huge = d > 88.0f;
  d = andv(d, keep & ~huge);
  return selectv(huge, splat(__builtin_inff()), andv(expv(d), keep));
}

double ruffian_soft_max(int32_t n, float *y, const float *x, float shift) {
  double total = 0;
  int32_t i = 0;
  while (i + VW <= n) {
    int32_t end = i + BLOCK;
    if (end > n) end = n;
    vf z = splat(0);
    for (; i + VW <= end; i += VW) {
      vf e = softv(loadv(x + i), shift);
      storev(y + i, e);
      z += e;
    }
    total += hsumv(z);
  }
  if (i < n) {
    float tx[VW], ty[VW];
    int32_t left = n - i;
    for (int j = 0; j < VW; j++) tx[j] = j < left ? x[i + j] : -__builtin_inff();
    vf e = softv(loadv(tx), shift);
    storev(ty, e);
    for (int j = 0; j < left; j++) y[i + j] = ty[j];
    total += hsumv(e);
  }
  return total;
}

/* Σ w[i] over the i < n with x[i] ≥ threshold (float32 lanes per block of BLOCK, then float64).
 * NaN is never ≥ anything: it is left out. */
double ruffian_mass_above(const float *x, const float *w, int32_t n, float threshold) {
  double total = 0;
  int32_t i = 0;
  while (i + VW <= n) {
    int32_t end = i + BLOCK;
    if (end > n) end = n;
    vf z0 = splat(0), z1 = z0;
    for (; i + 2 * VW <= end; i += 2 * VW) {
      z0 += andv(loadv(w + i), loadv(x + i) >= threshold);
      z1 += andv(loadv(w + i + VW), loadv(x + i + VW) >= threshold);
    }
    for (; i + VW <= end; i += VW) z0 += andv(loadv(w + i), loadv(x + i) >= threshold);
    total += hsumv(z0 + z1);
  }
  for (; i < n; i++)
    if (x[i] >= threshold) total += w[i];
  return total;
}

typedef int8_t vb __attribute__((vector_size(VW)));
typedef int8_t vb_wide __attribute__((vector_size(4 * VW)));

/* The low byte of each lane of a mask: AVX-512 narrows in one instruction (vpmovdb); AVX2 has
 * none, and a byte shuffle (GCC 12+ and Clang's __builtin_shufflevector) does it there; older
 * compilers narrow lane by lane (slower, the same bytes). */
#if VW == 16 || !(defined(__clang__) || __GNUC__ >= 12)
#define LOW_BYTES(m) __builtin_convertvector((m), vb)
#elif VW == 8
#define LOW_BYTES(m) __builtin_shufflevector((vb_wide)(m), (vb_wide)(m), 0, 4, 8, 12, 16, 20, 24, 28)
#else
#define LOW_BYTES(m) __builtin_shufflevector((vb_wide)(m), (vb_wide)(m), 0, 4, 8, 12)
#endif

/* The lanes of a comparison's mask as bits, lane 0 lowest: one byte a lane, 0 or 1, then 8
 * bytes at a time gathered into one by a multiplication (byte j's bit lands on bit 56 + j). */
static inline uint32_t lane_bits(vi mask) {
  vb bytes = (vb)LOW_BYTES(mask) & 1;
  uint32_t bits = 0;
  for (int h = 0; h < VW; h += 8) {
    uint64_t q = 0;
    memcpy(&q, (const char *)&bytes + h, VW - h < 8 ? VW - h : 8);
    bits |= (uint32_t)((q * 0x0102040810204080ull) >> 56) << h;
  }
  return bits;
}

/*
 * In one pass over x[0..n): every x < from becomes `value`; the i with from ≤ x[i] < to are
 * listed in ascending order, i to index, x[i] to band_x and w[i] to band_w; returns how many.
 * NaN is neither masked nor listed. The WebAssembly maskCollect kernel's contract.
 */
int32_t ruffian_mask_collect(float *x, const float *w, int32_t n, float from, float to,
                             float value, int32_t *index, float *band_w, float *band_x) {
  int32_t count = 0;
  int32_t i = 0;
  for (; i + VW <= n; i += VW) {
    vf v = loadv(x + i);
    vi below = v < from;
    vi band = ~below & (v < to);
    storev(x + i, selectv(below, splat(value), v));
    for (uint32_t bits = lane_bits(band); bits; bits &= bits - 1) {
      int j = __builtin_ctz(bits);
      index[count] = i + j;
      band_x[count] = v[j];
      band_w[count++] = w[i + j];
    }
  }
  for (; i < n; i++) {
    float v = x[i];
    if (v < from)
      x[i] = value;
    else if (v < to) {
      index[count] = i;
      band_x[count] = v;
      band_w[count++] = w[i];
    }
  }
  return count;
}
