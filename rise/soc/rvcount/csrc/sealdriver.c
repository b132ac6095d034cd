/*
 * sealdriver: SEAL-Embedded's asymmetric CKKS encryption phase by phase,
 * for counting instructions under qemu-riscv64 (package rvcount). Built
 * statically with SEAL-Embedded's device/lib sources by rvcount.BuildSEAL.
 *
 *     sealdriver N NPRIMES MARK_SYSCALL
 *
 * It follows SEAL-Embedded's own asymmetric test (device/test/
 * ckks_tests_asym.c): ckks_setup, a secret key, per prime a public key from
 * gen_pk, then the encode-encrypt sequence. The per-prime encryption is the
 * body of the library's ckks_encode_encrypt_asym, the same calls in the
 * same order, with a marker system call between phases; before it, the
 * library's own ckks_encode_encrypt_asym runs on copies of the public key
 * and the driver fails unless both give the same ciphertext words.
 * Marker ids: 1 encode, 2 sample, 3 lift, 4 ntt, 5 product (edge.Phase
 * numbering), 255 unmeasured (public-key generation, the reference run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "ckks_asym.h"
#include "ckks_common.h"
#include "ckks_sym.h"
#include "ntt.h"
#include "polymodarith.h"
#include "sample.h"

static long mark_nr;
static void mark(long id) { syscall(mark_nr, id, 0, 0); }

enum { ENCODE = 1, SAMPLE = 2, LIFT = 3, NTT = 4, PRODUCT = 5, SKIP = 255 };

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: sealdriver N NPRIMES MARK_SYSCALL\n");
        return 2;
    }
    size_t n = strtoul(argv[1], NULL, 10), nprimes = strtoul(argv[2], NULL, 10);
    mark_nr = strtol(argv[3], NULL, 0);

    Parms parms;
    parms.sample_s = true; /* sampled here: the adapter's key files are not needed */
    parms.is_asymmetric = true;
    parms.pk_from_file = false;
    parms.small_s = true;
    parms.small_u = true;

    ZZ *mempool = ckks_mempool_setup_asym(n);
    SE_PTRS p;
    ckks_set_ptrs_asym(n, mempool, &p);
    ZZ *pk_c0 = p.c0_ptr, *pk_c1 = p.c1_ptr, *ntt_roots = p.ntt_roots_ptr, *pte = p.ntt_pte_ptr;
    ZZ *u = p.ternary;
    int8_t *e1 = p.e1_ptr;
    flpt *v = p.values;
    size_t vlen = n / 2;

    ZZ *s = calloc(n / 16, sizeof(ZZ));
    int8_t *ep_small = calloc(n, sizeof(int8_t));
    ZZ *s_save = calloc(n, sizeof(ZZ)), *ep_save = calloc(n, sizeof(ZZ));
    ZZ *ref0 = calloc(n, sizeof(ZZ)), *ref1 = calloc(n, sizeof(ZZ));
    ZZ *ref_pte = calloc(n, sizeof(ZZ)), *ref_roots = calloc(2 * n, sizeof(ZZ));
    int64_t *conj_save = calloc(n, sizeof(int64_t));

    SE_PRNG prng, shareable_prng;
    ckks_setup(n, nprimes, p.index_map_ptr, &parms);
    ckks_setup_s(&parms, NULL, &prng, s);
    ckks_reset_primes(&parms);
    for (size_t i = 0; i < vlen; i++) v[i] = (flpt)(sin(0.37 * (double)i) * 100.0 + (double)(i % 7));
    sample_poly_cbd_generic_prng_16(n, &prng, ep_small);

    mark(0);
    if (!ckks_encode_base(&parms, v, vlen, p.index_map_ptr, p.ifft_roots, p.conj_vals)) {
        fprintf(stderr, "sealdriver: encode failed\n");
        return 1;
    }
    mark(ENCODE);
    ckks_asym_init(&parms, NULL, &prng, p.conj_vals_int_ptr, u, e1);
    mark(SAMPLE);
    memcpy(conj_save, p.conj_vals_int_ptr, n * sizeof(int64_t));
    for (size_t i = 0; i < parms.nprimes; i++) {
        Modulus *mod = parms.curr_modulus;
        gen_pk(&parms, s, ntt_roots, NULL, &shareable_prng, s_save, ep_small, ep_save, pk_c0, pk_c1);
        /* The library's encryption of this prime, on copies (reference). */
        memcpy(ref0, pk_c0, n * sizeof(ZZ));
        memcpy(ref1, pk_c1, n * sizeof(ZZ));
        ckks_encode_encrypt_asym(&parms, p.conj_vals_int_ptr, u, e1, ref_roots, ref_pte, NULL, NULL, ref0, ref1);
        mark(SKIP);

        /* ckks_encode_encrypt_asym's body, phase by phase. */
        if (parms.small_u) expand_poly_ternary(u, &parms, pte);
        mark(LIFT);
        ntt_roots_initialize(&parms, ntt_roots);
        ntt_inpl(&parms, ntt_roots, pte);
        mark(NTT);
        poly_mult_mod_ntt_form_inpl(pk_c1, pte, n, mod);
        poly_mult_mod_ntt_form_inpl(pk_c0, pte, n, mod);
        mark(PRODUCT);
        reduce_set_e_small(&parms, e1, pte);
        mark(LIFT);
        ntt_inpl(&parms, ntt_roots, pte);
        mark(NTT);
        poly_add_mod_inpl(pk_c1, pte, n, mod);
        mark(PRODUCT);
        reduce_set_pte(&parms, p.conj_vals_int_ptr, pte);
        mark(LIFT);
        ntt_inpl(&parms, ntt_roots, pte);
        mark(NTT);
        poly_add_mod_inpl(pk_c0, pte, n, mod);
        mark(PRODUCT);

        if (memcmp(ref0, pk_c0, n * sizeof(ZZ)) || memcmp(ref1, pk_c1, n * sizeof(ZZ))) {
            fprintf(stderr, "sealdriver: prime %zu: the phased encryption differs from ckks_encode_encrypt_asym\n", i);
            return 1;
        }
        if (memcmp(conj_save, p.conj_vals_int_ptr, n * sizeof(int64_t))) {
            fprintf(stderr, "sealdriver: the message changed during prime %zu\n", i);
            return 1;
        }
        ckks_next_prime_asym(&parms, u);
        mark(LIFT);
    }
    printf("ok N=%zu primes=%zu\n", n, nprimes);
    return 0;
}
