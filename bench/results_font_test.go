package bench

import (
	"image"
	"image/color"
	"reflect"
	"testing"
)

func TestFontGlyphs(t *testing.T) {
	for r := rune(' '); r <= '~'; r++ {
		if _, ok := font5x7[r]; !ok {
			t.Errorf("no glyph for %q", r)
		}
	}
	for r, g := range font5x7 {
		lit := 0
		for i, row := range g {
			if len(row) != glyphW {
				t.Errorf("%q row %d: %q is not %d wide", r, i, row, glyphW)
			}
			for _, c := range row {
				switch c {
				case '#':
					lit++
				case '.':
				default:
					t.Errorf("%q row %d: %q has %q", r, i, row, c)
				}
			}
		}
		if (lit == 0) != (r == ' ') {
			t.Errorf("%q: %d pixels lit", r, lit)
		}
	}
	if got := missingGlyphs("p99 1.5µs, a€b€"); !reflect.DeepEqual(got, []rune{'€'}) {
		t.Errorf("missingGlyphs = %q, want only €", got)
	}
}

func TestDrawText(t *testing.T) {
	on := color.RGBA{0xff, 0, 0, 0xff}
	const scale = 2
	img := image.NewRGBA(image.Rect(0, 0, 40, 40))
	drawText(img, 3, 4, "A7", scale, on)
	if got, want := textWidth("A7", scale), (2*glyphAdvance-1)*scale; got != want {
		t.Fatalf("textWidth %d, want %d", got, want)
	}
	// Every pixel of the image is lit exactly where the glyphs' art says.
	for y := range 40 {
		for x := range 40 {
			want := false
			if gx, gy := (x-3)/scale, (y-4)/scale; x >= 3 && y >= 4 && gy < glyphH {
				if i, col := gx/glyphAdvance, gx%glyphAdvance; i < 2 && col < glyphW {
					want = font5x7[[]rune("A7")[i]][gy][col] == '#'
				}
			}
			if got := img.RGBAAt(x, y) == on; got != want {
				t.Fatalf("pixel (%d,%d) lit %v, want %v", x, y, got, want)
			}
		}
	}

	// Upright: the text reads bottom to top from (x, y), glyph tops to
	// the left. The first glyph's top-left font pixel lands at (x, y).
	up := image.NewRGBA(image.Rect(0, 0, 40, 40))
	drawTextUp(up, 5, 30, "F", 1, on)
	for row := range glyphH {
		for col := range glyphW {
			want := font5x7['F'][row][col] == '#'
			if got := up.RGBAAt(5+row, 30-col) == on; got != want {
				t.Errorf("upright F font (%d,%d) at (%d,%d): lit %v, want %v", col, row, 5+row, 30-col, got, want)
			}
		}
	}
	// A label's bounds are exactly what it draws: F lights its first
	// column and its top row, p the last column and the descender row, so
	// their pixels fill the box's extremes.
	for _, lb := range []chartLabel{{text: "Fp", x: 5, y: 40}, {text: "Fp", x: 5, y: 40, up: true}} {
		img := image.NewRGBA(image.Rect(0, 0, 60, 60))
		if lb.up {
			drawTextUp(img, lb.x, lb.y, lb.text, chartText, on)
		} else {
			drawText(img, lb.x, lb.y, lb.text, chartText, on)
		}
		var lit image.Rectangle
		for y := range 60 {
			for x := range 60 {
				if img.RGBAAt(x, y) == on {
					lit = lit.Union(image.Rect(x, y, x+1, y+1))
				}
			}
		}
		if b := lb.bounds(); b != lit {
			t.Errorf("%+v: bounds %v, drawn %v", lb, b, lit)
		}
	}

	// A rune without a glyph draws a box rather than nothing.
	box := image.NewRGBA(image.Rect(0, 0, 10, 10))
	drawText(box, 0, 0, "€", 1, on)
	if box.RGBAAt(0, 0) != on || box.RGBAAt(4, 6) != on || box.RGBAAt(2, 3) == on {
		t.Error("missing glyph is not a hollow box")
	}
}
