/* Shared by the floor program and its peer. */
#define FLOOR_MSG 600
#define FLOOR_CALLS 5
