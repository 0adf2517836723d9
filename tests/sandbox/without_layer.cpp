// sandbox-without-layer LAYER PROGRAM [ARGS...]: runs PROGRAM on what looks
// like a kernel without LAYER (landlock or seccomp): a seccomp filter makes
// that layer's system calls fail with ENOSYS, exactly as on a kernel built
// without it (landlock-disabled: EOPNOTSUPP, as when Landlock is built in but
// not enabled at boot). Filters survive exec, so PROGRAM cannot tell the difference.
#include <seccomp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: sandbox-without-layer landlock|landlock-disabled|seccomp PROGRAM [ARGS...]\n");
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return 3;
  int rc = 0;
  if (std::strcmp(argv[1], "landlock") == 0) {
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(landlock_create_ruleset), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(landlock_add_rule), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(landlock_restrict_self), 0);
  } else if (std::strcmp(argv[1], "landlock-disabled") == 0) {
    // Built in but left out of the lsm= list at boot: the kernel answers
    // EOPNOTSUPP.
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(landlock_create_ruleset), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(landlock_add_rule), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(landlock_restrict_self), 0);
  } else if (std::strcmp(argv[1], "seccomp") == 0) {
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(seccomp), 0);
  } else {
    std::fprintf(stderr, "sandbox-without-layer: unknown layer %s\n", argv[1]);
    return 2;
  }
  if (rc != 0 || seccomp_load(ctx) != 0) return 3;
  seccomp_release(ctx);
  ::execv(argv[2], argv + 2);
  std::fprintf(stderr, "sandbox-without-layer: exec %s: %s\n", argv[2], std::strerror(errno));
  return 127;
}
