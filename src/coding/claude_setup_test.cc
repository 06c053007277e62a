// Placeholder while the tests are written.
#include <gtest/gtest.h>
