// Moved: the one parallel layer is checker/parallel.h. This forwarding header
// stays only until the branches that still include it are merged.
#pragma once

#include "checker/parallel.h"
