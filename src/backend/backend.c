#include "backend.h"

static const ck_backend_iface *ck_backends_[2] = {&ck_backend_cpu, NULL};

ck_status ck_cuda_init(void);

const ck_backend_iface *ck_backend_for(ck_device dev)
{
    if (dev.type < 0 || dev.type > 1) return NULL;
    if (dev.type == CK_DEVICE_CUDA && !ck_backends_[1]) {
        /* the driver loads on the first use of a GPU device, never at import */
        static int tried;
        if (!tried) {
            tried = 1;
            if (ck_cuda_init() != CK_OK) ck_error_clear();
        }
    }
    return ck_backends_[dev.type];
}

void ck_backend_register(ck_device_type type, const ck_backend_iface *iface)
{
    ck_backends_[type] = iface;
}
