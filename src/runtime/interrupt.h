/*
 * interrupt.h - Ctrl-C (SIGINT) and the kernel time limit while the core
 * waits for a device or runs a long CPU kernel.
 *
 * The process's own SIGINT handler (Python's) stays in place except while
 * someone "catches": a GPU wait that has lasted a millisecond, a CPU launch
 * that has lasted a tick of the CPU runtime's watchdog.  Then ours is
 * installed in its place; it only counts the signal and calls a hook (the
 * CPU kernel runtime's, which asks running launches to stop), so that the
 * catcher can end its work with CK_ERR_INTERRUPT.  When the last catcher
 * ends, the previous handler is put back; a SIGINT that came while
 * catching but that no operation reported as CK_ERR_INTERRUPT (the work
 * ended on its own first) is raised again, so the program sees it as it
 * would have.  Where SIGINT is ignored or has its default action (a C
 * program with no handler), nothing is caught: Ctrl-C acts as it always
 * did.  Nothing here calls into Python.
 *
 *     unsigned seen = ck_sigint_count();
 *     int catching = 0;
 *     while (!done()) {
 *         if (!catching && waited_long) catching = ck_sigint_catch_begin();
 *         if (ck_sigint_count() != seen) {
 *             ck_sigint_reported();
 *             if (catching) ck_sigint_catch_end();
 *             return ck_error_set(CK_ERR_INTERRUPT, "...");
 *         }
 *     }
 *     if (catching) ck_sigint_catch_end();
 *
 * Environment:
 *   CUDAKIT_KERNEL_TIMEOUT  the kernel time limit in seconds (read once;
 *                           ck_kernel_timeout_set overrides it)
 */
#ifndef CK_RUNTIME_INTERRUPT_H
#define CK_RUNTIME_INTERRUPT_H

#include <stdint.h>

/* Start catching SIGINT (nested, from any thread): 1 when our handler is
 * now in place for this caller, who must then call ck_sigint_catch_end;
 * 0 when SIGINT is ignored or has its default action. */
int ck_sigint_catch_begin(void);
void ck_sigint_catch_end(void);
/* How many SIGINTs were caught so far (wraps). */
unsigned ck_sigint_count(void);
/* An operation ended with CK_ERR_INTERRUPT for the SIGINT it saw: it is
 * not raised again when catching ends. */
void ck_sigint_reported(void);
/* Called inside the signal handler after counting (so async-signal-safe). */
void ck_sigint_set_hook(void (*hook)(void));

/* The kernel time limit in nanoseconds, 0 for none (ck_kernel_timeout_set
 * in cudakit_device.h, CUDAKIT_KERNEL_TIMEOUT). */
uint64_t ck_kernel_timeout_ns(void);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ck_now_ns(void);

#endif
