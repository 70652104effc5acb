package devicetest

// goldenMasks are dropout keep bits of columns c0..c0+127 drawn with gcn's
// own dropKeep (gcn/random.go at commit 8ad73aa, run as a copy of the file
// in a scratch module): they tie this suite's reference, and through it
// every device, to the masks gcn draws.
var goldenMasks = []struct {
	seed       uint64
	step, site int
	vertex     int32
	c0         int
	p          float64
	bits       [2]uint64
}{
	{1, 0, 0, 0, 0, 0.5, [2]uint64{0x96fc45dee9fe41c8, 0x1ca7efe680fc8ca8}},
	{42, 3, 1, 17, 5, 0.5, [2]uint64{0xc9eed1b547ac2857, 0xd8ee13e9d0a328dc}},
	{42, 3, 2, 17, 5, 0.1, [2]uint64{0xffffffffeef7d7df, 0xffbffffffffffeff}},
	{7, 100, 0, 123456, 64, 0.9, [2]uint64{0x1080221200000200, 0x4040000100100004}},
	{3735928559, 9, 3, -1, 0, 0.3, [2]uint64{0xefc5f3e948e9ffe6, 0xfe7e4fb663b97eff}},
}
