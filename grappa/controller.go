package grappa

// Controller decides when a worker moves to the next super-epoch (§3.5):
// after EpochsPerSuperEpoch epochs, or earlier when the coverage deficit
// 1 − ĉ has stayed above Deficit for Patience consecutive steps, so that a
// partition that hides many neighbors is left sooner. The switch is a
// collective decision in the caller (all workers share the schedule), so
// the caller all-reduces the vote; the Controller only counts.
type Controller struct {
	EpochsPerSuperEpoch int
	// Deficit is the threshold on 1 − ĉ; ≥ 1 disables the early switch.
	Deficit float64
	// Patience is how many consecutive steps above Deficit trigger it
	// (at least one full epoch is always trained first).
	Patience int

	epochs, above int
}

// Step records one training step's coverage ĉ.
func (c *Controller) Step(coverage float64) {
	if 1-coverage > c.Deficit {
		c.above++
	} else {
		c.above = 0
	}
}

// EndEpoch records the end of an epoch and reports whether the super-epoch
// ends here; when it does the counters restart for the next one.
func (c *Controller) EndEpoch() bool {
	c.epochs++
	early := c.Patience > 0 && c.above >= c.Patience
	if c.epochs >= c.EpochsPerSuperEpoch || early {
		c.epochs, c.above = 0, 0
		return true
	}
	return false
}
