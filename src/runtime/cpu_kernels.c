/* Placeholder until the CPU target lands: every entry says so. */
#include "cpu_kernels.h"

static ck_status not_yet(void)
{
    return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "CUDA C kernels on the CPU are not implemented yet");
}

ck_status ck_cpu_module_load(const char *source, const char *const *options, int noptions,
                             const char *const *name_exprs, int nexprs, ck_cpu_module **out)
{
    (void)source; (void)options; (void)noptions; (void)name_exprs; (void)nexprs;
    *out = NULL;
    return not_yet();
}
void ck_cpu_module_free(ck_cpu_module *m) { (void)m; }
ck_status ck_cpu_module_get_function(ck_cpu_module *m, const char *name, ck_cpu_function **out)
{
    (void)m; (void)name; *out = NULL;
    return not_yet();
}
int ck_cpu_function_params(const ck_cpu_function *f, size_t *sizes, int max) { (void)f; (void)sizes; (void)max; return -1; }
size_t ck_cpu_function_static_shared(const ck_cpu_function *f) { (void)f; return 0; }
ck_status ck_cpu_module_get_global(ck_cpu_module *m, const char *name, void **ptr, size_t *nbytes)
{
    (void)m; (void)name; *ptr = NULL; *nbytes = 0;
    return not_yet();
}
ck_status ck_cpu_launch(ck_cpu_function *f, const unsigned grid[3], const unsigned block[3], size_t dyn_shared,
                        void **args, const ck_cpu_arg_info *info)
{
    (void)f; (void)grid; (void)block; (void)dyn_shared; (void)args; (void)info;
    return not_yet();
}
static int bounds_ = 0;
int ck_cpu_bounds_mode(void) { return bounds_; }
void ck_cpu_set_bounds_mode(int on) { bounds_ = on; }
