/* The frames of a loaded kernel library, read from its unwind tables (see
 * internal.h): .eh_frame says for every function where the canonical frame
 * address is at each instruction, as the stack pointer plus an offset; the
 * largest offset is how far the function moves the stack pointer, its
 * frame.  A function whose frame address follows the frame pointer instead
 * (alloca, a variable-length array, a realigned stack) has no static frame.
 * Read on x86-64 only (the registers named are its); elsewhere, and for
 * anything not understood, the answer is "unknown" and fibers get the most. */
#define _GNU_SOURCE /* dl_iterate_phdr, dlinfo */
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
typedef struct ck_cfi {
    const uint8_t *p, *end;
    int bad;
} ck_cfi;

static uint64_t ck_cfi_uleb(ck_cfi *c)
{
    uint64_t v = 0;
    for (int shift = 0; c->p < c->end; shift += 7) {
        uint8_t b = *c->p++;
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    c->bad = 1;
    return 0;
}

static int64_t ck_cfi_sleb(ck_cfi *c)
{
    int64_t v = 0;
    int shift = 0;
    uint8_t b = 0x80;
    while (c->p < c->end && (b & 0x80)) {
        b = *c->p++;
        if (shift < 64) v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        shift += 7;
    }
    if (b & 0x80) c->bad = 1;
    if (shift < 64 && (b & 0x40)) v = (int64_t)((uint64_t)v | ~(uint64_t)0 << shift);
    return v;
}

static void ck_cfi_skip(ck_cfi *c, uint64_t n)
{
    if ((uint64_t)(c->end - c->p) < n) {
        c->bad = 1;
        c->p = c->end;
    } else {
        c->p += n;
    }
}

/* Bytes of a pointer in a DW_EH_PE encoding; -1 for LEB128, 0 unknown. */
static int ck_cfi_enc_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case 0x00: return 8;
    case 0x02: case 0x0a: return 2;
    case 0x03: case 0x0b: return 4;
    case 0x04: case 0x0c: return 8;
    case 0x01: case 0x09: return -1;
    default: return 0;
    }
}

static void ck_cfi_skip_ptr(ck_cfi *c, uint8_t enc)
{
    int n = ck_cfi_enc_size(enc);
    if (n < 0) ck_cfi_uleb(c);
    else if (n == 0) c->bad = 1;
    else ck_cfi_skip(c, (uint64_t)n);
}

typedef struct ck_cie {
    int64_t data_align;
    uint8_t fde_enc;
    int has_z;
    uint64_t off; /* the CFA rule at entry: rsp + off */
} ck_cie;

enum { CK_DW_RBP = 6, CK_DW_RSP = 7, CK_DW_OP_BREG6 = 0x76 };

/* A CFA offset given in data-alignment units. */
static uint64_t ck_cfi_factored(ck_cfi *c, const ck_cie *cie)
{
    int64_t v = ck_cfi_sleb(c);
    if (v < -(1 << 24) || v > (1 << 24) || cie->data_align < -64 || cie->data_align > 64) {
        c->bad = 1;
        return 0;
    }
    return (uint64_t)(v * cie->data_align);
}

/* Run call frame instructions; the largest rsp-relative CFA offset they
 * reach, or -1 when the frame is not static (its CFA follows rbp). */
static int64_t ck_cfi_run(ck_cfi *c, const ck_cie *cie, uint64_t off0)
{
    uint64_t reg = CK_DW_RSP, off = off0, max = off0;
    uint64_t saved_reg[8], saved_off[8];
    int depth = 0;
    while (c->p < c->end && !c->bad) {
        uint8_t op = *c->p++;
        uint8_t hi = op & 0xc0;
        if (hi == 0x40 || hi == 0xc0) continue;      /* advance_loc, restore */
        if (hi == 0x80) { ck_cfi_uleb(c); continue; } /* offset */
        switch (op) {
        case 0x00: break;
        case 0x01: ck_cfi_skip_ptr(c, cie->fde_enc); break;
        case 0x02: ck_cfi_skip(c, 1); break;
        case 0x03: ck_cfi_skip(c, 2); break;
        case 0x04: ck_cfi_skip(c, 4); break;
        case 0x05: case 0x09: case 0x14: case 0x2f: ck_cfi_uleb(c); ck_cfi_uleb(c); break;
        case 0x06: case 0x07: case 0x08: case 0x2e: ck_cfi_uleb(c); break;
        case 0x0a:
            if (depth < 8) { saved_reg[depth] = reg; saved_off[depth] = off; }
            depth++;
            break;
        case 0x0b:
            if (depth > 0 && --depth < 8) { reg = saved_reg[depth]; off = saved_off[depth]; }
            break;
        case 0x0c: reg = ck_cfi_uleb(c); off = ck_cfi_uleb(c); break;
        case 0x0d: reg = ck_cfi_uleb(c); break;
        case 0x0e: off = ck_cfi_uleb(c); break;
        case 0x0f: {
            uint64_t n = ck_cfi_uleb(c);
            /* rbp-based (a realigned stack); the PLT's rsp-based one is small */
            if (n && c->p < c->end && *c->p == CK_DW_OP_BREG6) return -1;
            ck_cfi_skip(c, n);
            break;
        }
        case 0x10: case 0x16: ck_cfi_uleb(c); ck_cfi_skip(c, ck_cfi_uleb(c)); break;
        case 0x11: case 0x15: ck_cfi_uleb(c); ck_cfi_sleb(c); break;
        case 0x12: reg = ck_cfi_uleb(c); off = ck_cfi_factored(c, cie); break;
        case 0x13: off = ck_cfi_factored(c, cie); break;
        default: c->bad = 1; break;
        }
        if (reg == CK_DW_RBP) return -1;
        if (reg == CK_DW_RSP && off > max && off < ((uint64_t)1 << 40)) max = off;
    }
    return c->bad ? -1 : (int64_t)max;
}

static int ck_cie_parse(const uint8_t *p, const uint8_t *end, ck_cie *cie)
{
    ck_cfi c = {p, end, 0};
    uint8_t version = c.p < c.end ? *c.p++ : 0;
    const char *aug = (const char *)c.p;
    size_t alen = strnlen(aug, (size_t)(c.end - c.p));
    ck_cfi_skip(&c, alen + 1);
    if (c.bad || (version != 1 && version != 3) || strchr(aug, 'e')) return -1;
    ck_cfi_uleb(&c); /* code alignment */
    cie->data_align = ck_cfi_sleb(&c);
    if (version == 1) ck_cfi_skip(&c, 1);
    else ck_cfi_uleb(&c);
    cie->fde_enc = 0;
    cie->has_z = aug[0] == 'z';
    if (cie->has_z) {
        uint64_t n = ck_cfi_uleb(&c);
        ck_cfi c2 = {c.p, c.p + n <= c.end ? c.p + n : c.end, 0};
        for (const char *a = aug + 1; *a && !c2.bad; a++) {
            if (*a == 'R') cie->fde_enc = c2.p < c2.end ? *c2.p++ : 0;
            else if (*a == 'L') ck_cfi_skip(&c2, 1);
            else if (*a == 'P') {
                uint8_t enc = c2.p < c2.end ? *c2.p++ : 0;
                ck_cfi_skip_ptr(&c2, enc);
            } else if (*a != 'S' && *a != 'B') return -1;
        }
        ck_cfi_skip(&c, n);
    }
    if (c.bad) return -1;
    cie->off = 8;
    ck_cie tmp = *cie;
    int64_t r = ck_cfi_run(&c, &tmp, 8);
    if (r < 0) return -1;
    cie->off = (uint64_t)r;
    return 0;
}

/* Walk .eh_frame [start, end): the sum of every function's largest frame;
 * -1 when one is not static or the table is not understood. */
static int64_t ck_eh_frame_sum(const uint8_t *start, const uint8_t *end)
{
    int64_t total = 0;
    ck_cie cie;
    const uint8_t *cie_at = NULL;
    for (const uint8_t *p = start; end - p >= 8;) {
        uint32_t len, id;
        memcpy(&len, p, 4);
        if (len == 0) break; /* the terminator */
        if (len == 0xffffffffu || len < 4 || (uint64_t)(end - p - 4) < len) return -1;
        const uint8_t *body = p + 4, *next = body + len;
        memcpy(&id, body, 4);
        if (id != 0) {
            if (id > (uint64_t)(body - start)) return -1;
            const uint8_t *cp = body - id; /* the FDE's CIE */
            if (cp != cie_at) {
                uint32_t clen;
                memcpy(&clen, cp, 4);
                if (clen == 0xffffffffu || clen < 4 || (uint64_t)(end - cp - 4) < clen ||
                    ck_cie_parse(cp + 8, cp + 4 + clen, &cie) != 0)
                    return -1;
                cie_at = cp;
            }
            ck_cfi c = {body + 4, next, 0};
            ck_cfi_skip_ptr(&c, cie.fde_enc);                   /* pc_begin */
            ck_cfi_skip_ptr(&c, (uint8_t)(cie.fde_enc & 0x0f)); /* pc_range */
            if (cie.has_z) ck_cfi_skip(&c, ck_cfi_uleb(&c));
            if (c.bad) return -1;
            int64_t f = ck_cfi_run(&c, &cie, cie.off);
            if (f < 0) return -1;
            total += f;
        }
        p = next;
    }
    return total;
}

typedef struct ck_eh_find {
    uintptr_t base;
    const uint8_t *eh, *end;
} ck_eh_find;

static int ck_eh_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    ck_eh_find *f = arg;
    if (info->dlpi_addr != f->base) return 0;
    const ElfW(Phdr) *hdr = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME) hdr = &info->dlpi_phdr[i];
    if (!hdr) return 1;
    const uint8_t *h = (const uint8_t *)(info->dlpi_addr + hdr->p_vaddr);
    /* version 1, eh_frame_ptr as pcrel|sdata4 (what the linkers write) */
    if (h[0] != 1 || h[1] != 0x1b) return 1;
    int32_t rel;
    memcpy(&rel, h + 4, 4);
    const uint8_t *eh = h + 4 + rel;
    /* .eh_frame ends where its loaded segment does, if not at its terminator */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const uint8_t *lo = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_LOAD && eh >= lo && eh < lo + ph->p_memsz) {
            f->eh = eh;
            f->end = lo + ph->p_memsz;
        }
    }
    return 1;
}
#endif

int64_t ck_cpu_library_frames(void *dl)
{
#if defined(__x86_64__)
    struct link_map *lm = NULL;
    if (!dl || dlinfo(dl, RTLD_DI_LINKMAP, &lm) != 0 || !lm) return -1;
    ck_eh_find f = {lm->l_addr, NULL, NULL};
    dl_iterate_phdr(ck_eh_find_cb, &f);
    return f.eh ? ck_eh_frame_sum(f.eh, f.end) : -1;
#else
    (void)dl;
    return -1;
#endif
}

