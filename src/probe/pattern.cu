// Reference CUDA C for pattern.ptx (the PTX is hand-written from this; see the header of pattern.ptx).
// Word w of a pool (its 8-byte index from the start of the pool) holds (w * K) ^ seed, where the seed
// mixes the GPU ordinal and a per-run nonce: every page, GPU and run gets its own bytes, so a page
// that aliases another or still holds a previous run's data fails verification.
#include <stdint.h>
#define K 0x9E3779B97F4A7C15ull

extern "C" __global__ void kvlint_fill(uint64_t *buf, uint64_t n_vec, uint64_t base_word, uint64_t seed) {
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t v = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; v < n_vec; v += stride) {
        uint64_t w = base_word + 2 * v;
        uint64_t a = w * K;
        ((ulonglong2 *)buf)[v] = make_ulonglong2(a ^ seed, (a + K) ^ seed);  // one 16-byte store
    }
}

// out[0] += mismatching words, out[1] = min(out[1], first mismatching word). Only threads that saw a
// mismatch touch `out`, so a clean pool costs no atomics at all.
extern "C" __global__ void kvlint_verify(const uint64_t *buf, uint64_t n_vec, uint64_t base_word, uint64_t seed,
                                         unsigned long long *out) {
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned long long bad = 0, first = ~0ull;
    for (uint64_t v = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; v < n_vec; v += stride) {
        uint64_t w = base_word + 2 * v;
        uint64_t a = w * K;
        ulonglong2 got = __ldcs((const ulonglong2 *)buf + v);  // one 16-byte streaming load
        if (got.x != (a ^ seed)) { bad++; first = min(first, w); }
        if (got.y != ((a + K) ^ seed)) { bad++; first = min(first, w + 1); }
    }
    if (bad) { atomicAdd(out, bad); atomicMin(out + 1, first); }
}
