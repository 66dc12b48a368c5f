/* Entry points shared between the CPU backend's files. */
#ifndef CK_CPU_INTERNAL_H
#define CK_CPU_INTERNAL_H

#include "../backend.h"
#include "cpu_loops.h"

/* Walk an iteration space with an inner loop; split over the cores when
 * it->size >= parallel_min. */
ck_status ck_cpu_walk(ck_cpu_loop fn, const ck_iter *it, int64_t parallel_min);
ck_status ck_cpu_reduce(const ck_reduce_desc *d);
ck_status ck_cpu_scan(const ck_scan_desc *d);

/* memory figures (cpu_backend.c) */
ck_status ck_cpu_memory_stats(ck_device dev, ck_mem_stats *out);
ck_status ck_cpu_memory_empty_cache(ck_device dev);
ck_status ck_cpu_memory_set_limit(ck_device dev, size_t limit);
ck_status ck_cpu_memory_reset_peak(ck_device dev);

/* the device runtime (cpu_runtime.c) */
ck_status ck_cpu_device_properties(ck_device dev, ck_device_props *out);
ck_status ck_cpu_device_mem_info(ck_device dev, size_t *free_bytes, size_t *total_bytes);
ck_status ck_cpu_stream_create(ck_device dev, int nonblocking, int priority, ck_stream *out);
ck_status ck_cpu_stream_destroy(ck_device dev, ck_stream s);
ck_status ck_cpu_stream_synchronize(ck_device dev, ck_stream s);
ck_status ck_cpu_stream_query(ck_device dev, ck_stream s, int *done);
ck_status ck_cpu_stream_wait_event(ck_device dev, ck_stream s, ck_event e);
ck_status ck_cpu_stream_priority_range(ck_device dev, int *least, int *greatest);
ck_stream ck_cpu_stream_current(ck_device dev);
void ck_cpu_stream_set_current(ck_device dev, ck_stream s);
ck_status ck_cpu_event_create(ck_device dev, int timing, ck_event *out);
ck_status ck_cpu_event_destroy(ck_device dev, ck_event e);
ck_status ck_cpu_event_record(ck_device dev, ck_event e, ck_stream s);
ck_status ck_cpu_event_synchronize(ck_device dev, ck_event e);
ck_status ck_cpu_event_query(ck_device dev, ck_event e, int *done);
ck_status ck_cpu_event_elapsed_ms(ck_device dev, ck_event start, ck_event end, float *ms);

/* user modules (cpu_module.c, over src/runtime/cpu_kernels.h) */
#define CK_CPU_DEFAULT_DYN_SHARED (48 * 1024)   /* a GPU's default limit */
ck_status ck_cpu_module_load_slot(ck_device dev, const char *source, const char *name_hint,
                                  const char *const *options, int noptions, const char *const *name_exprs,
                                  int nexprs, ck_module **out);
void ck_cpu_module_free_slot(ck_module *m);
ck_status ck_cpu_module_get_global_slot(ck_module *m, const char *name, void **ptr, size_t *nbytes);
ck_status ck_cpu_function_new(ck_module *m, const char *name, ck_function **out);
void ck_cpu_function_free(ck_function *f);
ck_status ck_cpu_function_attributes(ck_function *f, ck_function_attrs *out);
ck_status ck_cpu_function_set_max_dynamic_shared(ck_function *f, int bytes);
ck_status ck_cpu_function_suggest_block(ck_function *f, size_t dyn_shared, int block_limit, int *min_grid,
                                        int *block);
int ck_cpu_function_params_slot(ck_function *f, size_t *sizes, int max);
ck_status ck_cpu_function_launch(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                 ck_stream stream, unsigned flags, int nparams, void **params,
                                 const ck_launch_arg *info);
ck_status ck_cpu_function_max_cooperative_blocks(ck_function *f, const unsigned block[3], size_t shmem, int *out);

/* cpu_train.c: the training ops */
ck_status ck_cpu_rows(const ck_rows_desc *d);
ck_status ck_cpu_optim_step(const ck_optim_desc *d);
ck_status ck_cpu_bias_act(const ck_bias_act_desc *d);
ck_status ck_cpu_scatter_add(const ck_scatter_add_desc *d);

/* cpu_index.c: advanced indexing */
ck_status ck_cpu_gather(const ck_gather_desc *d);
ck_status ck_cpu_scatter(const ck_gather_desc *d);
ck_status ck_cpu_nonzero(const ck_nonzero_desc *d);
ck_status ck_cpu_compress(const ck_compress_desc *d);
/* cpu_random.c: Philox fills */
ck_status ck_cpu_random(const ck_random_desc *d);
/* cpu_sort.c: sort, argsort, searchsorted and histogram */
ck_status ck_cpu_sort(const ck_sort_desc *d);
ck_status ck_cpu_searchsorted(const ck_searchsorted_desc *d);
ck_status ck_cpu_histogram(const ck_histogram_desc *d);

/* graphs: record and replay (cpu_graph.c) */
ck_status ck_cpu_graph_begin(ck_device dev, ck_stream s, void **impl);
ck_status ck_cpu_graph_end(ck_device dev, ck_stream s, void *impl);
ck_status ck_cpu_graph_launch(ck_device dev, void *impl, ck_stream s);
void ck_cpu_graph_free(ck_device dev, void *impl);
int64_t ck_cpu_graph_nodes(void *impl);
int ck_cpu_graph_uses(void *impl, const void *p, size_t n);

#endif
