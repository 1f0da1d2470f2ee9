#pragma once

namespace swarmfit::app {

int integrate_command(int argc, char** argv);
int bench_command(int argc, char** argv);
int predict_command(int argc, char** argv);
int data_command(int argc, char** argv);
int fit_command(int argc, char** argv);
int summary_command(int argc, char** argv);
int plot_command(int argc, char** argv);
int simulate_command(int argc, char** argv);
int stability_command(int argc, char** argv);
int map_command(int argc, char** argv);
int catalog_command(int argc, char** argv);
int nbody_command(int argc, char** argv);
int pm_command(int argc, char** argv);

}  // namespace swarmfit::app
