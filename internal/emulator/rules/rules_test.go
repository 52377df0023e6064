package rules

// testZone is the zone of the emulator's tests.
const testZone = "us-central2-b"
