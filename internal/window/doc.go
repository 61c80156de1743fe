// Package window says when config-triggered rollouts may start: rollout
// windows, written as people write opening hours ("Mon-Fri 09:00-17:00
// Europe/Berlin"), and freezes, dated periods in which none starts. It is
// pure: a schedule and an instant in, whether it is open and when that
// next changes out. What waits, and which schedule applies to a reader,
// belong to the hook.
//
// # Decisions
//
//   - A window is open while the wall clock of its zone reads a day and a
//     time inside it: local time, as the team that wrote it reads it. So
//     "09:00-17:00" stays 09:00 to 17:00 across a daylight-saving shift;
//     on the night the clocks go forward, wall times that never occur are
//     skipped (a window "02:00-03:00" in Europe/Berlin is empty that
//     night), and on the night they go back, a wall time that occurs twice
//     is inside the window both times.
//   - A time range whose end is not after its start crosses midnight and
//     belongs to the day it starts on: "Fri 22:00-02:00" is Friday 22:00 to
//     Saturday 02:00. "24:00" ends at midnight; equal start and end are
//     refused (empty or whole day would be a guess: write "00:00-24:00").
//   - The zone is required, an IANA name ("UTC" for UTC): a schedule with
//     no zone would mean whatever the process's zone is, which in a
//     container is UTC and on a laptop running `preview` is not. Zones
//     come from Go's embedded copy of the tz database, so the binary reads
//     the same rules in a distroless image as on a laptop.
//   - Several windows, separated by ";", open a schedule when any one is
//     open.
//   - A freeze is a period between two local dates (and times) of a zone:
//     "2026-12-21/2027-01-04 Europe/Berlin". A date alone means the whole
//     day: from 00:00 of the first to 24:00 of the last.
//   - Every answer is computed from the tz rules by the standard library:
//     no offset is computed by hand. Changes of openness are found among
//     the instants where the wall clock reads a boundary and the zone's own
//     transitions, and each candidate is checked by the same rule that
//     says whether an instant is open, so the two cannot disagree.
//   - Input is bounded: a schedule of more than MaxWindows windows or
//     MaxLen bytes is refused, so a tenant's annotation costs a fixed
//     amount to read and to evaluate.
package window
