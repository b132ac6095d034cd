package main

import (
	"flag"
	"fmt"
	"math"
	"strings"

	"github.com/rosemary-fhe/rosemary/tools/reproduce"
)

func init() {
	register(command{name: "reproduce", summary: "regenerate the Rosemary paper's Figures 9-17 and Table V from our models (simulated, beside the paper's quoted values)", run: runReproduce})
}

func runReproduce(args []string) error {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	fig := fs.String("fig", "", "only this figure (9..17, or V for Table V); default all")
	dir := fs.String("o", "./out/reproduce", "output directory")
	asJSON := fs.Bool("json", false, "print the rows and geometric means as JSON")
	wl := fs.String("w", "", "comma-separated workloads (default all)")
	maxTiles := fs.Int("max-tiles", 0, "tiles per node at most (0: reproduce's default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	figs := reproduce.Figures
	if *fig != "" {
		f, err := reproduce.FigureByID(*fig)
		if err != nil {
			return err
		}
		figs = []reproduce.Figure{f}
	}
	opt := reproduce.Options{MaxTiles: *maxTiles}
	if *wl != "" {
		opt.Workloads = strings.Split(*wl, ",")
	}
	bar := newProgressBar()
	cur := ""
	opt.Progress = func(done, total int, what string) {
		bar.show(fmt.Sprintf("figure %-3s simulations", cur), int64(done), int64(total))
	}
	r, err := reproduce.NewRunner(opt)
	if err != nil {
		return err
	}
	var rows, gms []map[string]any
	for _, f := range figs {
		cur = f.ID
		res, err := f.Run(r)
		if err != nil {
			bar.done()
			return fmt.Errorf("figure %s: %w", f.ID, err)
		}
		if err := res.Write(*dir); err != nil {
			bar.done()
			return err
		}
		rows = append(rows, res.Records()...)
		gms = append(gms, res.JSONGeoMeans()...)
		if !*asJSON {
			bar.clear()
			fmt.Printf("%s -> %s.{md,csv,svg,png}\n", f.Title, strings.TrimSuffix(*dir, "/")+"/"+res.FileBase())
			for _, g := range res.GeoMeans {
				if math.IsNaN(g.Paper) {
					fmt.Printf("  %s: ours %.4g (%s), no paper value\n", g.Name, g.Ours, g.OursFrom)
					continue
				}
				fmt.Printf("  %s: ours %.4g (%s), paper %.4g (quoted), ratio %.3g\n", g.Name, g.Ours, g.OursFrom, g.Paper, g.Ratio)
			}
		}
	}
	bar.done()
	if *asJSON {
		return printJSON(map[string]any{
			"provenance": reproduce.Provenance,
			"rows":       rows,
			"geomeans":   gms,
		})
	}
	return nil
}
