"""Statistics shared by the tournament layer's sequential procedures (arena duel, adaptive
schedules): standard library only, no arena imports, so every layer may use it."""
