// The faulty wrappers (faulty_wrappers.cpp) as the plugin "test-faults", so that
// llama-conformance can be shown failing a broken backend end to end. Their static
// registrars run as the plugin loads; the host captures them as the plugin's entries.
#include "llama/plugins/plugin.hpp"

LLAMA_PLUGIN("test-faults", registrar) {}
