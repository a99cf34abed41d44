// Catch2 v2 entry point: one binary runs every tests/cpp/*.cc file.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
