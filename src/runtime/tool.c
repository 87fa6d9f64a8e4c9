/* The tool interface's event hook (runtime/tool.h). */
#include "runtime/tool.h"

void (*aptus_tool_event_fn)(int kind, int64_t a, int64_t b);
