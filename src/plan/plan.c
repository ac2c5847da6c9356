/* The plan's text form: "key=value,..." with an exact round trip. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/context.h"
#include "sys/assert.h"

#define TSR__PLAN_INT_MAX 65536

typedef enum { K_INT, K_MODE, K_WALK, K_ISA, K_MMA, K_ACC, K_PACK, K_SPLIT } key_type;

static const struct {
  const char *name;
  key_type type;
  size_t off;
  int min; /* smallest legal integer value */
} keys[] = {
    {"bm", K_INT, offsetof(tsr_plan, bm), 1},
    {"bn", K_INT, offsetof(tsr_plan, bn), 1},
    {"bk", K_INT, offsetof(tsr_plan, bk), 1},
    {"wm", K_INT, offsetof(tsr_plan, wm), 1},
    {"wn", K_INT, offsetof(tsr_plan, wn), 1},
    {"tm", K_INT, offsetof(tsr_plan, tm), 1},
    {"tn", K_INT, offsetof(tsr_plan, tn), 1},
    {"stages", K_INT, offsetof(tsr_plan, stages), 1},
    {"vec", K_INT, offsetof(tsr_plan, vec), 1},
    {"a", K_MODE, offsetof(tsr_plan, a), 0},
    {"b", K_MODE, offsetof(tsr_plan, b), 0},
    {"pad", K_INT, offsetof(tsr_plan, pad), 0},
    {"walk", K_WALK, offsetof(tsr_plan, walk), 0},
    {"splitk", K_INT, offsetof(tsr_plan, splitk), 1},
    {"threads", K_INT, offsetof(tsr_plan, threads), 0},
    {"isa", K_ISA, offsetof(tsr_plan, isa), 0},
    {"mma", K_MMA, offsetof(tsr_plan, mma), 0},
    {"acc", K_ACC, offsetof(tsr_plan, acc), 0},
    {"minblocks", K_INT, offsetof(tsr_plan, minblocks), 0},
    {"pack", K_PACK, offsetof(tsr_plan, pack), 0},
    {"split", K_SPLIT, offsetof(tsr_plan, split), 0},
    {"kfrag", K_PACK, offsetof(tsr_plan, kfrag), 0},
    {"kloop", K_INT, offsetof(tsr_plan, kloop), 0},
    {"kunroll", K_INT, offsetof(tsr_plan, kunroll), 0},
    {"moduli", K_INT, offsetof(tsr_plan, moduli), 0},
    {"gstride", K_INT, offsetof(tsr_plan, gstride), 0},
    {"rvec", K_INT, offsetof(tsr_plan, rvec), 0},
    {"lanerows", K_INT, offsetof(tsr_plan, lanerows), 0},
    {"tailk", K_INT, offsetof(tsr_plan, tailk), 0},
    {"wave", K_INT, offsetof(tsr_plan, wave), 0},
    {"forder", K_INT, offsetof(tsr_plan, forder), 0},
    {"kwait", K_INT, offsetof(tsr_plan, kwait), 0},
    {"pelect", K_INT, offsetof(tsr_plan, pelect), 0},
    {"krel", K_INT, offsetof(tsr_plan, krel), 0},
    {"kinner", K_INT, offsetof(tsr_plan, kinner), 0},
    {"lazy", K_INT, offsetof(tsr_plan, lazy), 0},
    {"lazyk", K_INT, offsetof(tsr_plan, lazyk), 0},
};
#define NKEYS (sizeof keys / sizeof keys[0])
/* keys[0..NBASE) are the base keys tsr_plan_format always names; the rest
 * (kfrag on) it names only when set. */
#define NBASE 21

static const char *const mode_names[] = {"staged", "view"};
static const char *const isa_names[] = {"auto", "generic", "avx2", "avx512"};
static const char *const mma_names[] = {"ffma", "tf32x3", "tf32", "wgmma-tf32x3", "wgmma-tf32",
                                         "gemv", "wgmma-s8"};
static const char *const acc_names[] = {"step", "chain"};
static const char *const pack_names[] = {"none", "a", "b", "ab"};
static const char *const split_names[] = {"inline", "pack", "producer", "producer-reg",
                                           "producer-pack", "producer-bulk", "producer-tma", "tma"};

tsr_status tsr_plan_parse(const char *text, tsr_plan *p, char *msg, size_t cap) {
  if (!text || !p) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: empty");
  tsr_plan out = *p;
  int seen[NKEYS] = {0};
  const char *s = text;
  if (!*s) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: empty text");
  for (;;) {
    size_t len = strcspn(s, ",");
    char item[128];
    if (len == 0) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: empty item in '%s'", text);
    if (len >= sizeof item)
      return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: item '%.40s...' is too long", s);
    memcpy(item, s, len);
    item[len] = '\0';
    char *eq = strchr(item, '=');
    if (!eq) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: '%s' is not key=value", item);
    *eq = '\0';
    const char *val = eq + 1;
    size_t k;
    for (k = 0; k < NKEYS; k++)
      if (strcmp(item, keys[k].name) == 0) break;
    if (k == NKEYS) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: unknown key '%s'", item);
    if (seen[k]) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: key '%s' given twice", item);
    seen[k] = 1;
    char *field = (char *)&out + keys[k].off;
    switch (keys[k].type) {
      case K_INT: {
        const char *q = val;
        long v = 0;
        if (!*q) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: %s has no value", item);
        while (*q) {
          if (!isdigit((unsigned char)*q))
            return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                                "plan: %s=%s is not a non-negative integer", item, val);
          v = v * 10 + (*q - '0');
          if (v > TSR__PLAN_INT_MAX)
            return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: %s=%s exceeds %d", item, val,
                                TSR__PLAN_INT_MAX);
          q++;
        }
        if (v < keys[k].min)
          return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: %s=%s must be at least %d", item,
                              val, keys[k].min);
        *(int *)field = (int)v;
        break;
      }
      case K_MODE: {
        int found = -1;
        for (int i = 0; i < 2; i++)
          if (strcmp(val, mode_names[i]) == 0) found = i;
        if (found < 0)
          return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: %s=%s is not staged or view", item,
                              val);
        *(tsr_input_mode *)field = (tsr_input_mode)found;
        break;
      }
      case K_ISA: {
        int found = -1;
        for (int i = 0; i < 4; i++)
          if (strcmp(val, isa_names[i]) == 0) found = i;
        if (found < 0)
          return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                              "plan: isa=%s is not auto, generic, avx2 or avx512", val);
        *(tsr_isa *)field = (tsr_isa)found;
        break;
      }
      case K_MMA: {
        int found = -1;
        for (int i = 0; i < (int)(sizeof mma_names / sizeof *mma_names); i++)
          if (strcmp(val, mma_names[i]) == 0) found = i;
        if (found < 0)
          return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                              "plan: mma=%s is not ffma, tf32x3, tf32, wgmma-tf32x3, wgmma-tf32, gemv "
                              "or wgmma-s8",
                              val);
        *(tsr_mma *)field = (tsr_mma)found;
        break;
      }
      case K_ACC: {
        int found = -1;
        for (int i = 0; i < 2; i++)
          if (strcmp(val, acc_names[i]) == 0) found = i;
        if (found < 0)
          return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: acc=%s is not step or chain", val);
        *(tsr_acc *)field = (tsr_acc)found;
        break;
      }
      case K_PACK: {
        int found = -1;
        for (int i = 0; i < 4; i++)
          if (strcmp(val, pack_names[i]) == 0) found = i;
        if (found < 0)
          return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: %s=%s is not none, a, b or ab",
                              item, val);
        *(tsr_pack *)field = (tsr_pack)found;
        break;
      }
      case K_SPLIT: {
        int found = -1;
        for (int i = 0; i < (int)(sizeof split_names / sizeof *split_names); i++)
          if (strcmp(val, split_names[i]) == 0) found = i;
        if (found < 0)
          return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                              "plan: split=%s is not inline, pack, producer, producer-reg, "
                              "producer-pack, producer-bulk, producer-tma or tma",
                              val);
        *(tsr_split *)field = (tsr_split)found;
        break;
      }
      case K_WALK: {
        char wmsg[200];
        if (tsr_walk_parse(val, (tsr_walk *)field, wmsg, sizeof wmsg) != TSR_OK)
          return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: %s", wmsg);
        break;
      }
    }
    s += len;
    if (!*s) break;
    s++; /* past ',' */
    if (!*s) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "plan: trailing ',' in '%s'", text);
  }
  /* A whole plan (every base key named, as tsr_plan_format writes it) is
   * that plan: the optional keys it leaves out are unset, not the base's.
   * Session 35: tuned texts parsed over a default with krel=1 or kfrag=ab
   * failed their replay (or ran another plan) and were served changed. */
  TSR_ASSERT(strcmp(keys[NBASE].name, "kfrag") == 0);
  int whole = 1;
  for (size_t k = 0; k < NBASE; k++) whole &= seen[k];
  for (size_t k = NBASE; whole && k < NKEYS; k++) {
    if (seen[k]) continue;
    char *field = (char *)&out + keys[k].off;
    if (keys[k].type == K_PACK) *(tsr_pack *)field = TSR_PACK_NONE;
    else {
      TSR_ASSERT(keys[k].type == K_INT);
      *(int *)field = 0;
    }
  }
  *p = out;
  return TSR_OK;
}

int tsr_plan_format(const tsr_plan *p, char *buf, size_t cap) {
  /* kfrag, kloop, kunroll, moduli, gstride, rvec, lanerows, tailk, wave,
   * forder, kwait, pelect, krel, kinner, lazy and lazyk are named only when set: the text of every plan
   * that predates them (tuning databases, results, the generated sources'
   * headers) is unchanged. Sized for every optional int at its widest
   * (",lanerows=-2147483648" is 21 characters): no truncation. */
  char walk[64], extra[9 + 15 * 24] = "";
  tsr_walk_format(&p->walk, walk, sizeof walk);
  size_t x = 0;
  if (p->kfrag != TSR_PACK_NONE)
    x += (size_t)snprintf(extra + x, sizeof extra - x, ",kfrag=%s",
                          pack_names[(unsigned)p->kfrag < 4 ? (unsigned)p->kfrag : 0]);
  const struct { const char *name; int v; } opt[] = {
      {"kloop", p->kloop},   {"kunroll", p->kunroll}, {"moduli", p->moduli},
      {"gstride", p->gstride}, {"rvec", p->rvec},   {"lanerows", p->lanerows},
      {"tailk", p->tailk},   {"wave", p->wave},       {"forder", p->forder},
      {"kwait", p->kwait},   {"pelect", p->pelect},   {"krel", p->krel},
      {"kinner", p->kinner}, {"lazy", p->lazy},   {"lazyk", p->lazyk}};
  for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
    if (opt[i].v != 0) {
      x += (size_t)snprintf(extra + x, sizeof extra - x, ",%s=%d", opt[i].name, opt[i].v);
      TSR_ASSERT(x < sizeof extra);
    }
  return snprintf(buf, cap,
                  "bm=%d,bn=%d,bk=%d,wm=%d,wn=%d,tm=%d,tn=%d,stages=%d,vec=%d,a=%s,b=%s,pad=%d,"
                  "walk=%s,splitk=%d,threads=%d,isa=%s,mma=%s,acc=%s,minblocks=%d,pack=%s,split=%s%s",
                  p->bm, p->bn, p->bk, p->wm, p->wn, p->tm, p->tn, p->stages, p->vec,
                  mode_names[p->a == TSR_IN_VIEW], mode_names[p->b == TSR_IN_VIEW], p->pad, walk,
                  p->splitk, p->threads,
                  isa_names[(unsigned)p->isa < 4 ? (unsigned)p->isa : 0],
                  mma_names[(unsigned)p->mma < sizeof mma_names / sizeof *mma_names ? (unsigned)p->mma : 0],
                  acc_names[p->acc == TSR_ACC_CHAIN], p->minblocks,
                  pack_names[(unsigned)p->pack < 4 ? (unsigned)p->pack : 0],
                  split_names[(unsigned)p->split < sizeof split_names / sizeof *split_names ? (unsigned)p->split : 0],
                  extra);
}

int tsr_plan_equal(const tsr_plan *a, const tsr_plan *b) {
  return a->bm == b->bm && a->bn == b->bn && a->bk == b->bk && a->wm == b->wm && a->wn == b->wn &&
         a->tm == b->tm && a->tn == b->tn && a->stages == b->stages && a->vec == b->vec &&
         a->a == b->a && a->b == b->b && a->pad == b->pad && a->walk.kind == b->walk.kind &&
         (a->walk.kind == TSR_WALK_LINEAR || a->walk.r == b->walk.r) &&
         (a->walk.kind != TSR_WALK_RECT || a->walk.c == b->walk.c) && a->splitk == b->splitk &&
         a->threads == b->threads && a->isa == b->isa && a->mma == b->mma && a->acc == b->acc &&
         a->minblocks == b->minblocks && a->pack == b->pack && a->split == b->split &&
         a->kfrag == b->kfrag && a->kloop == b->kloop && a->kunroll == b->kunroll &&
         a->moduli == b->moduli && a->gstride == b->gstride && a->rvec == b->rvec &&
         a->lanerows == b->lanerows && a->tailk == b->tailk && a->wave == b->wave &&
         a->forder == b->forder && a->kwait == b->kwait && a->pelect == b->pelect &&
         a->krel == b->krel && a->kinner == b->kinner && a->lazy == b->lazy &&
         a->lazyk == b->lazyk;
}
