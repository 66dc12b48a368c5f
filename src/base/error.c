/* Per-thread error state: the core reports failures as a status plus a
 * message kept here; src/python turns them into exceptions. */
#include "cudakit.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local ck_status ck_err_status_;
static _Thread_local char ck_err_msg_[8192]; /* room for a compile log and source excerpt */

const char *ck_error_message(void) { return ck_err_msg_; }

ck_status ck_error_status(void) { return ck_err_status_; }

ck_status ck_error_set(ck_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ck_err_msg_, sizeof ck_err_msg_, fmt, ap);
    va_end(ap);
    ck_err_status_ = status;
    return status;
}

void ck_error_clear(void)
{
    ck_err_status_ = CK_OK;
    ck_err_msg_[0] = '\0';
}
