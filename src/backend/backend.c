#include "backend.h"

static const ck_backend_iface *ck_backends_[2] = {&ck_backend_cpu, NULL};

const ck_backend_iface *ck_backend_for(ck_device dev)
{
    if (dev.type < 0 || dev.type > 1) return NULL;
    return ck_backends_[dev.type];
}

void ck_backend_register(ck_device_type type, const ck_backend_iface *iface)
{
    ck_backends_[type] = iface;
}
