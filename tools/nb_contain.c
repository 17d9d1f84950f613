/* nb_contain SECONDS COMMAND [ARG...]
 *
 * Run COMMAND so that nothing it starts outlives it, hangs the build or
 * fills the disk (tools/run_bounded.sh uses it when it is built).
 *
 *   - This process becomes a child subreaper (Linux prctl): a descendant
 *     that double-forks or calls setsid() is re-parented here, not to init,
 *     so when COMMAND ends every process left of its tree is found among
 *     our children and killed, generation by generation, until none is left.
 *   - Past SECONDS, COMMAND's process group gets TERM, and KILL
 *     NB_KILL_AFTER seconds later (default 5).
 *   - COMMAND's stdout and stderr pass through pipes; past NB_OUTPUT_MAX
 *     bytes in all (default 16 MiB) the tree is killed with a message.
 *   - No file COMMAND or its descendants write may grow past NB_FILE_MAX
 *     bytes (default 64 MiB, RLIMIT_FSIZE set in the child, soft and hard,
 *     so nothing below can raise it): the write that would pass it brings
 *     SIGXFSZ, and when that ends COMMAND (or COMMAND is a shell that says
 *     so in its status, 128 + SIGXFSZ) nb_contain names the command it
 *     stopped.  A descendant whose parent swallows its death is capped all
 *     the same; only the message is its parent's.
 *
 * Exit status: COMMAND's (128 + N for signal N), 124 when it timed out, 137
 * when it ignored TERM and was killed, 123 when its output passed the cap,
 * 122 when a file it wrote reached NB_FILE_MAX. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_OUTPUT_CAP 123
#define EXIT_FILE_CAP 122

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double env_number(const char *name, double fallback)
{
    const char *v = getenv(name);
    char *end;
    double x = v && *v ? strtod(v, &end) : fallback;
    return v && *v && (*end || !(x > 0)) ? fallback : x;
}

/* SIGKILL every process whose parent is us; returns how many were found. */
static int kill_our_children(void)
{
    pid_t me = getpid();
    int found = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
        char state;
        long ppid;
        if (rp && sscanf(rp + 1, " %c %ld", &state, &ppid) == 2 && ppid == me) {
            found++;
            kill((pid_t)pid, SIGKILL);
        }
    }
    closedir(d);
    return found;
}

/* Kill COMMAND's group, then whatever was re-parented to us, until no child
 * is left (bounded: a fork bomb cannot keep this busy beyond a few seconds). */
static void kill_tree(pid_t group, pid_t main_pid, int *main_status, int *main_done)
{
    kill(-group, SIGKILL);
    double give_up = now() + 5;
    for (;;) {
        int st;
        pid_t w;
        while ((w = waitpid(-1, &st, WNOHANG)) > 0)
            if (w == main_pid && !*main_done)
                *main_status = st, *main_done = 1;
        if (w < 0 && errno == ECHILD)
            return;
        kill_our_children();
        if (now() > give_up)
            return;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: nb_contain SECONDS COMMAND [ARG...]\n");
        return 2;
    }
    char *end;
    double limit = strtod(argv[1], &end);
    if (*end || !(limit > 0)) {
        fprintf(stderr, "nb_contain: SECONDS: '%s' is not a positive number\n", argv[1]);
        return 2;
    }
    double kill_after = env_number("NB_KILL_AFTER", 5);
    double cap = env_number("NB_OUTPUT_MAX", 16.0 * 1024 * 1024);
    double file_cap = env_number("NB_FILE_MAX", 64.0 * 1024 * 1024);
#ifdef PR_SET_CHILD_SUBREAPER
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
    signal(SIGPIPE, SIG_IGN);
    int outp[2], errp[2];
    if (pipe(outp) != 0 || pipe(errp) != 0) {
        perror("nb_contain: pipe");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("nb_contain: fork");
        return 2;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(outp[1], STDOUT_FILENO);
        dup2(errp[1], STDERR_FILENO);
        close(outp[0]), close(outp[1]), close(errp[0]), close(errp[1]);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGXFSZ, SIG_DFL);
        struct rlimit fsize = {(rlim_t)file_cap, (rlim_t)file_cap};
        if (setrlimit(RLIMIT_FSIZE, &fsize) != 0) {
            fprintf(stderr, "nb_contain: cannot cap file sizes: %s\n", strerror(errno));
            _exit(127);
        }
        execvp(argv[2], argv + 2);
        fprintf(stderr, "nb_contain: %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* both sides, so no signal races the child's own call */
    close(outp[1]);
    close(errp[1]);

    struct pollfd fds[2] = {{outp[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
    int open_fds = 2, main_done = 0, main_status = 0, term_sent = 0, killed = 0, capped = 0;
    double total = 0, deadline = now() + limit;
    char buf[65536];
    while (open_fds > 0 || !main_done) {
        if (!main_done) {
            pid_t w = waitpid(pid, &main_status, WNOHANG);
            if (w == pid) {
                main_done = 1;
                /* COMMAND is over: nothing of its tree may keep running (or keep the pipes open) */
                kill_tree(pid, pid, &main_status, &main_done);
            }
        }
        double t = now();
        if (!main_done && t >= deadline) {
            if (!term_sent) {
                kill(-pid, SIGTERM);
                term_sent = 1;
                deadline = t + kill_after;
            } else if (!killed) {
                killed = 1;
                kill_tree(pid, pid, &main_status, &main_done);
            }
        }
        if (open_fds == 0) {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
            continue;
        }
        int r = poll(fds, 2, 20);
        if (r < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2 && r > 0; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
                continue;
            }
            if (capped)
                continue; /* draining what was written before the kill */
            total += (double)n;
            if (total > cap) {
                capped = 1;
                kill_tree(pid, pid, &main_status, &main_done);
                fprintf(stderr, "nb_contain: %s wrote more than %.0f bytes (NB_OUTPUT_MAX): stopped\n", argv[2], cap);
                continue;
            }
            (void)write_all(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, (size_t)n);
        }
    }
    if (capped)
        return EXIT_OUTPUT_CAP;
    /* SIGXFSZ killed COMMAND, or a shell running it reports that it killed its child */
    if ((WIFSIGNALED(main_status) && WTERMSIG(main_status) == SIGXFSZ) ||
        (WIFEXITED(main_status) && WEXITSTATUS(main_status) == 128 + SIGXFSZ)) {
        fprintf(stderr, "nb_contain: %s: a file it wrote reached %.0f bytes (NB_FILE_MAX): stopped\n", argv[2],
                file_cap);
        return EXIT_FILE_CAP;
    }
    if (killed)
        return 137;
    if (term_sent)
        return 124;
    if (WIFEXITED(main_status))
        return WEXITSTATUS(main_status);
    return WIFSIGNALED(main_status) ? 128 + WTERMSIG(main_status) : 1;
}
