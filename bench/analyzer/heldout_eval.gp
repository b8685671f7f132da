# heldout_eval.gp - the plot of docs/decision-rule.md, "Held-out hosts per
# duration bucket": false alarms, AMBG and power per duration bucket, one
# line per GPU model, from kpt-heldout-eval's --data file.
#   gnuplot -e "dat='FILE.dat'; out='FILE.png'" bench/analyzer/heldout_eval.gp
# (bench/analyzer/heldout_eval.sh runs it.) Solid: the held-out session's 5
# runs (M=5); dashed: its first 3 (M=3) or, in the power panel, +2%.
set terminal pngcairo size 1500,520 font "sans,10"
set output out
stats dat using 1 nooutput
n = STATS_blocks - 1   # the data ends with a block separator
set multiplot layout 1,3
set grid ytics
set key below
set xrange [-0.3:3.3]
set yrange [0:105]
set ylabel "percent"
set xlabel "key duration (base centre)"
set title "A/A false alarms: keys SLOW or FAST"
set yrange [0:*]
set format y "%.1f"
plot for [i=0:n-1] dat index i using 1:3:xtic(2) with linespoints lw 2 lc i+1 pt 7 title columnheader, \
     for [i=0:n-1] dat index i using 1:4 with linespoints lw 2 lc i+1 dt 2 pt 6 title columnheader
set yrange [0:105]
set format y "%g"
set title "A/A keys AMBG (too noisy to say)"
plot for [i=0:n-1] dat index i using 1:5:xtic(2) with linespoints lw 2 lc i+1 pt 7 title columnheader, \
     for [i=0:n-1] dat index i using 1:6 with linespoints lw 2 lc i+1 dt 2 pt 6 title columnheader
set title "Power, M=5: key planted slower, SLOW"
plot for [i=0:n-1] dat index i using 1:9:xtic(2) with linespoints lw 2 lc i+1 pt 7 title columnheader, \
     for [i=0:n-1] dat index i using 1:11 with linespoints lw 2 lc i+1 dt 2 pt 6 title columnheader
unset multiplot
