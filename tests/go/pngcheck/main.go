// SPDX-License-Identifier: BSD-3-Clause

// pngcheck looks at a screenshot of the heap-over-time page
// (tests/e2e/test_report_html.sh): every series' colour must cover enough
// pixels to be seen, and the lines given as growing (or flat) must rise
// from the left third of the image to the right third (or stay level).
//
//	pngcheck -png shot.png -colors '#4e79a7,#f28e2b' -min 300 \
//		-grow '#f28e2b' -flat '#4e79a7'
//
// Exit status 0 when every check holds; otherwise each failed check is
// printed on its own line and the status is 1.
package main

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"strconv"
	"strings"
)

// rgb is a colour from the page, "#rrggbb".
type rgb struct{ r, g, b uint8 }

func parseColour(s string) (rgb, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	if len(s) != 6 {
		return rgb{}, fmt.Errorf("colour %q: want #rrggbb", s)
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return rgb{}, fmt.Errorf("colour %q: %v", s, err)
	}
	return rgb{uint8(v >> 16), uint8(v >> 8), uint8(v)}, nil
}

func parseColours(list string) ([]rgb, error) {
	var out []rgb
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		c, err := parseColour(s)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func (c rgb) String() string { return fmt.Sprintf("#%02x%02x%02x", c.r, c.g, c.b) }

// tolerance allows for rounding in the browser's colour pipeline; the
// palette's colours are much further apart than this.
const tolerance = 6

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

func matches(img image.Image, x, y int, c rgb) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	return absDiff(uint8(r>>8), c.r) <= tolerance &&
		absDiff(uint8(g>>8), c.g) <= tolerance &&
		absDiff(uint8(b>>8), c.b) <= tolerance
}

// colourStats counts C's pixels and finds the highest (smallest y) one in
// the left and the right third of the image (-1 when there is none).
type colourStats struct {
	count             int
	topLeft, topRight int
}

func stats(img image.Image, c rgb) colourStats {
	bd := img.Bounds()
	w := bd.Dx()
	st := colourStats{topLeft: -1, topRight: -1}
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if !matches(img, x, y, c) {
				continue
			}
			st.count++
			rel := x - bd.Min.X
			if rel < w/3 && st.topLeft < 0 {
				st.topLeft = y - bd.Min.Y
			}
			if rel >= w-w/3 && st.topRight < 0 {
				st.topRight = y - bd.Min.Y
			}
		}
	}
	return st
}

func main() {
	pngPath := flag.String("png", "", "screenshot to check")
	colours := flag.String("colors", "", "comma-separated #rrggbb, one per series")
	minPixels := flag.Int("min", 300, "pixels each colour must cover")
	grow := flag.String("grow", "", "colours whose line must rise to the right")
	flat := flag.String("flat", "", "colours whose line must stay level")
	rise := flag.Int("rise", 100, "pixels a growing line must rise")
	level := flag.Int("level", 25, "pixels a flat line may move")
	flag.Parse()

	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "pngcheck: "+format+"\n", a...)
		os.Exit(1)
	}
	f, err := os.Open(*pngPath)
	if err != nil {
		fail("%v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		fail("%s: %v", *pngPath, err)
	}
	all, err := parseColours(*colours)
	if err != nil {
		fail("%v", err)
	}
	growing, err := parseColours(*grow)
	if err != nil {
		fail("%v", err)
	}
	levelLines, err := parseColours(*flat)
	if err != nil {
		fail("%v", err)
	}
	if len(all) == 0 {
		fail("no -colors given")
	}

	failed := false
	for _, c := range all {
		st := stats(img, c)
		fmt.Printf("%s: %d pixels, highest at y=%d (left third) y=%d (right third)\n",
			c, st.count, st.topLeft, st.topRight)
		if st.count < *minPixels {
			fmt.Printf("FAIL %s covers %d pixels, want >= %d\n", c, st.count, *minPixels)
			failed = true
		}
	}
	for _, c := range growing {
		st := stats(img, c)
		if st.topLeft < 0 || st.topRight < 0 || st.topLeft-st.topRight < *rise {
			fmt.Printf("FAIL %s does not rise by %d px: left y=%d right y=%d\n",
				c, *rise, st.topLeft, st.topRight)
			failed = true
		}
	}
	for _, c := range levelLines {
		st := stats(img, c)
		d := st.topLeft - st.topRight
		if st.topLeft < 0 || st.topRight < 0 || d > *level || d < -*level {
			fmt.Printf("FAIL %s is not level within %d px: left y=%d right y=%d\n",
				c, *level, st.topLeft, st.topRight)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
