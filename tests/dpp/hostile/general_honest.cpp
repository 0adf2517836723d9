// The honest general-profile plugin every general hostile case is made from.
#include "hostile.h"

int main() { return dot::dpp::hostile::run_general_honest(); }
