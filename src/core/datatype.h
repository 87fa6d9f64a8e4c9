/* Datatypes. Only predefined (contiguous) types exist so far; the message layer reaches a
 * datatype through aptus_dt_bytes / contiguity so that derived types plug in here. */
#ifndef APTUS_CORE_DATATYPE_H
#define APTUS_CORE_DATATYPE_H

#include "core/objects.h"

void aptus_datatype_init(void);
const char *aptus_dtype_name(const struct aptus_dtype *dt);

#endif
