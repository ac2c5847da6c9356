/* The verbs' option tables (cli.h): parsing, limits, one-line usage errors
 * and the generated --help option list. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- usage errors ---------------------------------------------------------- */
/* Appends text to out with control characters escaped, so that a message
 * echoing user input (a shape with a newline in it) stays one line. */
static size_t escape_into(char *out, const char *text) {
  static const char hex[] = "0123456789abcdef";
  size_t n = 0;
  for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
    unsigned char c = *s;
    if (c == '\n' || c == '\r' || c == '\t') {
      out[n++] = '\\';
      out[n++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
    } else if (c < 0x20 || c == 0x7f) {
      out[n++] = '\\';
      out[n++] = 'x';
      out[n++] = hex[c >> 4];
      out[n++] = hex[c & 15];
    } else {
      out[n++] = (char)c;
    }
  }
  return n;
}

static void error_line(const char *verb, const char *fmt, va_list ap) {
  char *msg = NULL;
  int len = vasprintf(&msg, fmt, ap);
  const char *v = verb ? verb : "";
  char *line = len >= 0 ? malloc(4 * (strlen(v) + (size_t)len) + 16) : NULL;
  if (!line) {
    fprintf(stderr, "tessera: out of memory\n");
    free(msg);
    return;
  }
  size_t n = 0;
  memcpy(line, "tessera", 7);
  n = 7;
  if (verb) {
    line[n++] = ' ';
    n += escape_into(line + n, v);
  }
  line[n++] = ':';
  line[n++] = ' ';
  n += escape_into(line + n, msg);
  line[n++] = '\n';
  fflush(stdout);
  fwrite(line, 1, n, stderr);
  free(line);
  free(msg);
}

int tsr_cli_usage_error(const char *verb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_line(verb, fmt, ap);
  va_end(ap);
  return TSR_EXIT_USAGE;
}

void tsr_cli_error(const char *verb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_line(verb, fmt, ap);
  va_end(ap);
}

/* ---- values ---------------------------------------------------------------- */
/* Whole-text numbers only: no leading blanks, no trailing characters. */
static int parse_ll(const char *t, long long *v) {
  if (!*t || isspace((unsigned char)*t)) return -1;
  char *end;
  errno = 0;
  *v = strtoll(t, &end, 10);
  return *end || errno ? -1 : 0;
}

static int parse_real(const char *t, double *v) {
  if (!*t || isspace((unsigned char)*t)) return -1;
  char *end;
  *v = strtod(t, &end);
  return *end || !isfinite(*v) ? -1 : 0; /* NaN and Inf are never values */
}

/* "a finite number >= 0", "a finite FP32 number in (0, 1e+06]", ... */
static void real_range_text(const tsr_cli_opt *o, char *buf, size_t cap) {
  int fp32 = o->kind == TSR_CLI_FLOAT, above = (o->flags & TSR_CLI_ABOVE) != 0;
  double none = fp32 ? TSR_CLI_FLT_MAX : HUGE_VAL;
  int has_lo = o->rlo > -none, has_hi = o->rhi < none;
  const char *what = fp32 ? "a finite FP32 number" : "a finite number";
  if (has_lo && has_hi)
    snprintf(buf, cap, "%s in %c%g, %g]", what, above ? '(' : '[', o->rlo, o->rhi);
  else if (has_lo)
    snprintf(buf, cap, "%s %s %g", what, above ? ">" : ">=", o->rlo);
  else if (has_hi)
    snprintf(buf, cap, "%s <= %g", what, o->rhi);
  else
    snprintf(buf, cap, "%s", what);
}

static int set_value(const char *verb, const tsr_cli_opt *o, const char *v) {
  switch (o->kind) {
    case TSR_CLI_INT: {
      long long x;
      if (parse_ll(v, &x) || x < o->lo || x > o->hi) {
        tsr_cli_usage_error(verb, "%s: '%s' is not an integer in %lld..%lld", o->name, v, o->lo,
                            o->hi);
        return -1;
      }
      *(long long *)o->dest = x;
      return 0;
    }
    case TSR_CLI_REAL:
    case TSR_CLI_FLOAT: {
      double x;
      double lo = o->rlo, hi = o->rhi;
      if (o->kind == TSR_CLI_FLOAT) {
        if (lo < -TSR_CLI_FLT_MAX) lo = -TSR_CLI_FLT_MAX;
        if (hi > TSR_CLI_FLT_MAX) hi = TSR_CLI_FLT_MAX;
      }
      int above = (o->flags & TSR_CLI_ABOVE) != 0;
      if (parse_real(v, &x) || (above ? !(x > lo) : x < lo) || x > hi) {
        char range[128];
        real_range_text(o, range, sizeof range);
        tsr_cli_usage_error(verb, "%s: '%s' is not %s", o->name, v, range);
        return -1;
      }
      if (o->kind == TSR_CLI_FLOAT) *(float *)o->dest = (float)x;
      else *(double *)o->dest = x;
      return 0;
    }
    case TSR_CLI_STRING:
      if ((o->flags & TSR_CLI_NONEMPTY) && !*v) {
        tsr_cli_usage_error(verb, "%s: needs a non-empty value", o->name);
        return -1;
      }
      *(const char **)o->dest = v;
      return 0;
    case TSR_CLI_CHOICE: {
      int n = 0;
      for (; o->choices[n]; n++)
        if (!strcmp(v, o->choices[n])) {
          *(int *)o->dest = n;
          return 0;
        }
      char list[256] = "";
      size_t len = 0;
      for (int i = 0; i < n && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                i == 0 ? "" : i == n - 1 ? " or " : ", ", o->choices[i]);
      tsr_cli_usage_error(verb, "%s: '%s' is not %s", o->name, v, list);
      return -1;
    }
    case TSR_CLI_CUSTOM:
      return o->parse(verb, o, v) ? -1 : 0;
    case TSR_CLI_FLAG:
      break;
  }
  return -1; /* unreachable: flags take no value */
}

/* ---- parsing ----------------------------------------------------------------- */
int tsr_cli_parse(const tsr_cli_spec *s, int argc, char **argv) {
  int nops = 0, options_done = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!options_done && a[0] == '-' && a[1]) {
      if (!strcmp(a, "--")) {
        options_done = 1;
        continue;
      }
      if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
        tsr_cli_print_help(s, stdout);
        return TSR_EXIT_OK;
      }
      const tsr_cli_opt *o = NULL;
      for (size_t j = 0; j < s->nopts && !o; j++)
        if (!strcmp(s->opts[j].name, a)) o = &s->opts[j];
      if (!o) return tsr_cli_usage_error(s->verb, "unknown option '%s' (see --help)", a);
      if (o->kind == TSR_CLI_FLAG) {
        *(int *)o->dest = 1;
      } else {
        /* A following option is never taken as the value: "--plan --backend
         * cpu" is a missing --plan value, not a plan named "--backend". */
        if (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2))
          return tsr_cli_usage_error(s->verb, "%s: needs a value", a);
        if (set_value(s->verb, o, argv[++i])) return TSR_EXIT_USAGE;
      }
      if (o->seen) *o->seen = 1;
      continue;
    }
    if (nops >= s->max_operands) {
      if (s->max_operands == 0)
        return tsr_cli_usage_error(s->verb, "unexpected argument '%s' (see --help)", a);
      return tsr_cli_usage_error(s->verb, "unexpected argument '%s' (one %s only)", a,
                                 s->operand_name);
    }
    s->operands[nops++] = a;
  }
  return TSR_CLI_CONTINUE;
}

/* ---- help ---------------------------------------------------------------------- */
#define HELP_MAX_LEFT 24

static size_t left_len(const tsr_cli_opt *o) {
  return strlen(o->name) + (o->metavar ? 1 + strlen(o->metavar) : 0);
}

static void print_entry(FILE *f, const char *name, const char *metavar, const char *help,
                        int width) {
  char left[128];
  snprintf(left, sizeof left, "%s%s%s", name, metavar ? " " : "", metavar ? metavar : "");
  int len = (int)strlen(left);
  if (len > width) fprintf(f, "  %s\n%*s", left, width + 4, "");
  else fprintf(f, "  %-*s  ", width, left);
  for (const char *h = help ? help : ""; *h;) {
    size_t n = strcspn(h, "\n");
    fwrite(h, 1, n, f);
    h += n;
    if (*h == '\n') {
      h++;
      if (*h) fprintf(f, "\n%*s", width + 4, "");
    }
  }
  fputc('\n', f);
}

void tsr_cli_print_help(const tsr_cli_spec *s, FILE *f) {
  fputs(s->usage, f);
  int width = 0;
  for (size_t i = 0; i < s->nopts; i++) {
    size_t n = left_len(&s->opts[i]);
    if (!(s->opts[i].flags & TSR_CLI_HIDDEN) && n <= HELP_MAX_LEFT && (int)n > width) width = (int)n;
  }
  for (size_t i = 0; i < s->nopts; i++)
    if (!(s->opts[i].flags & TSR_CLI_HIDDEN))
      print_entry(f, s->opts[i].name, s->opts[i].metavar, s->opts[i].help, width);
  print_entry(f, "-h, --help", NULL, "this help", width);
  if (s->footer) fprintf(f, "\n%s", s->footer);
}

/* ---- shared custom parsers ------------------------------------------------------ */
int tsr_cli_opt_inputs(const char *verb, const tsr_cli_opt *o, const char *text) {
  char msg[256];
  if (tsr_inputs_parse(text, (tsr_inputs *)o->dest, msg, sizeof msg)) {
    tsr_cli_usage_error(verb, "--%s", msg);
    return -1;
  }
  return 0;
}

int tsr_cli_opt_precision(const char *verb, const tsr_cli_opt *o, const char *text) {
  char msg[256];
  if (tsr_precision_parse(text, (tsr_precision *)o->dest, msg, sizeof msg)) {
    tsr_cli_usage_error(verb, "--%s", msg);
    return -1;
  }
  return 0;
}

int tsr_cli_opt_accuracy(const char *verb, const tsr_cli_opt *o, const char *text) {
  if (!strcmp(text, "off")) {
    *(int *)o->dest = -1;
    return 0;
  }
  tsr_inputs k;
  char msg[256];
  if (tsr_inputs_parse(text, &k, msg, sizeof msg) || k == TSR_INPUTS_DYADIC) {
    tsr_cli_usage_error(verb, "%s: '%s' is not random, normal, wide or off", o->name, text);
    return -1;
  }
  *(int *)o->dest = (int)k;
  return 0;
}

int tsr_cli_opt_gib(const char *verb, const tsr_cli_opt *o, const char *text) {
  double g;
  if (parse_real(text, &g) || !(g > 0) || g > 1048576.0) {
    tsr_cli_usage_error(verb, "%s: '%s' is not a number of GiB in (0, 1048576]", o->name, text);
    return -1;
  }
  *(double *)o->dest = g * 1073741824.0;
  return 0;
}

/* ---- lists ------------------------------------------------------------------------ */
void tsr_cli_list_free(char **items, int n) {
  for (int i = 0; i < n; i++) free(items[i]);
  free(items);
}

int tsr_cli_split_list(const char *verb, const char *name, const char *text, int max,
                       char ***items) {
  *items = NULL;
  int n = 1;
  for (const char *c = text; *c; c++) n += *c == ',';
  if (n > max) {
    tsr_cli_usage_error(verb, "%s: '%s' has %d items, at most %d", name, text, n, max);
    return -1;
  }
  char **v = calloc((size_t)n, sizeof *v);
  if (!v) {
    tsr_cli_usage_error(verb, "out of memory");
    return -1;
  }
  const char *t = text;
  for (int i = 0; i < n; i++) {
    size_t len = strcspn(t, ",");
    if (len == 0) {
      tsr_cli_usage_error(verb, "%s: item %d of '%s' is empty", name, i + 1, text);
      tsr_cli_list_free(v, i);
      return -1;
    }
    if (!(v[i] = strndup(t, len))) {
      tsr_cli_usage_error(verb, "out of memory");
      tsr_cli_list_free(v, i);
      return -1;
    }
    t += len + (t[len] == ',');
  }
  *items = v;
  return n;
}
