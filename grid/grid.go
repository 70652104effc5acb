package grid

import (
	"fmt"

	"scalegnn/collectives"
)

// Shape is the extent of the 4D grid.
type Shape struct{ D, X, Y, Z int }

// Ranks is the number of ranks the shape needs.
func (s Shape) Ranks() int { return s.D * s.X * s.Y * s.Z }

func (s Shape) String() string { return fmt.Sprintf("%dx%dx%d (d=%d)", s.X, s.Y, s.Z, s.D) }

// Coords returns the coordinates of world rank r.
func (s Shape) Coords(r int) (d, x, y, z int) {
	y = r % s.Y
	x = (r / s.Y) % s.X
	z = (r / (s.Y * s.X)) % s.Z
	d = r / (s.Y * s.X * s.Z)
	return
}

// Rank returns the world rank at the given coordinates.
func (s Shape) Rank(d, x, y, z int) int {
	return ((d*s.Z+z)*s.X+x)*s.Y + y
}

// Size returns the extent of axis a.
func (s Shape) Size(a Axis) int {
	switch a {
	case X:
		return s.X
	case Y:
		return s.Y
	case Z:
		return s.Z
	}
	panic(fmt.Sprintf("grid: bad axis %d", int(a)))
}

// Validate reports an error unless every extent is at least one and the
// product equals worldSize.
func (s Shape) Validate(worldSize int) error {
	if s.D < 1 || s.X < 1 || s.Y < 1 || s.Z < 1 {
		return fmt.Errorf("grid %v: every extent must be at least 1", s)
	}
	if s.Ranks() != worldSize {
		return fmt.Errorf("grid %v has %d ranks but the job was started with %d", s, s.Ranks(), worldSize)
	}
	return nil
}

// Grid is one rank's view of the 4D grid: its coordinates and the
// communicators of the groups it belongs to.
type Grid struct {
	Shape
	// Coordinates of this rank.
	CD, CX, CY, CZ int

	World collectives.Comm
	// Cube is the 3D group of this rank's replica (same d); its rank order
	// is the world order restricted to the replica.
	Cube collectives.Comm
	// XComm holds the ranks that share (d, y, z); rank within it is x.
	XComm, YComm, ZComm collectives.Comm
	// DP holds the ranks that share (x, y, z); rank within it is d.
	DP collectives.Comm

	// redist is Redistribute's plans and buffers, made at its first call.
	redist *redistCache
}

// namer is a communicator that names itself in messages (a watchdog's
// "all-reduce on the Y communicator"): New names what it splits "3D", "X",
// "Y", "Z" and "DP".
type namer interface{ SetName(name string) }

// New builds the grid of the given shape over world, splitting the
// communicators collectively (every rank of world must call it).
func New(world collectives.Comm, s Shape) (*Grid, error) {
	if err := s.Validate(world.Size()); err != nil {
		return nil, err
	}
	g := &Grid{Shape: s, World: world}
	g.CD, g.CX, g.CY, g.CZ = s.Coords(world.Rank())
	split := func(name string, color, key int) (collectives.Comm, error) {
		c, err := world.Split(color, key)
		if err != nil {
			return nil, fmt.Errorf("grid: splitting the %s communicator: %w", name, err)
		}
		if n, ok := c.(namer); ok {
			n.SetName(name)
		}
		return c, nil
	}
	var err error
	if g.Cube, err = split("3D", g.CD, world.Rank()); err != nil {
		return nil, err
	}
	if g.XComm, err = split("X", (g.CD*s.Z+g.CZ)*s.Y+g.CY, g.CX); err != nil {
		return nil, err
	}
	if g.YComm, err = split("Y", (g.CD*s.Z+g.CZ)*s.X+g.CX, g.CY); err != nil {
		return nil, err
	}
	if g.ZComm, err = split("Z", (g.CD*s.X+g.CX)*s.Y+g.CY, g.CZ); err != nil {
		return nil, err
	}
	if g.DP, err = split("DP", (g.CZ*s.X+g.CX)*s.Y+g.CY, g.CD); err != nil {
		return nil, err
	}
	return g, nil
}

// Comm returns the communicator of axis a.
func (g *Grid) Comm(a Axis) collectives.Comm {
	switch a {
	case X:
		return g.XComm
	case Y:
		return g.YComm
	case Z:
		return g.ZComm
	}
	panic(fmt.Sprintf("grid: bad axis %d", int(a)))
}

// Coord returns this rank's coordinate on axis a.
func (g *Grid) Coord(a Axis) int {
	switch a {
	case X:
		return g.CX
	case Y:
		return g.CY
	case Z:
		return g.CZ
	}
	panic(fmt.Sprintf("grid: bad axis %d", int(a)))
}

// Range returns this rank's block [lo, hi) of a dimension of length n split
// over axis a.
func (g *Grid) Range(n int, a Axis) (lo, hi int) {
	return Block(n, g.Size(a), g.Coord(a))
}

// CubeRank returns the rank in Cube of the rank of this replica at (x, y, z).
func (g *Grid) CubeRank(x, y, z int) int {
	return (z*g.X+x)*g.Y + y
}
